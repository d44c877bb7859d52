"""The library's layers, lowest first, and who may depend on each.

Dependencies run one way: base <- model <- importers <- load <- views <-
render <- advise <- session (one loaded run and the questions every front
door asks of it) <- web (the web UI's API and server) <- the public API
(//profiler) and the programs. A package is visible only to the layers
above it (and to the programs and tests outside profiler/), so a
dependency that runs the wrong way fails the build.
"""

LAYERS = ["base", "model", "importers", "load", "views", "render", "advise", "session", "web"]

# The programs, tools and tests built on the library.
OUTSIDE = [
    "//bench:__pkg__",
    "//cli:__pkg__",
    "//examples:__pkg__",
    "//tests:__subpackages__",
    "//tools:__pkg__",
]

def visible_above(layer):
    """The visibility of a layer's package: the layers above it."""
    above = LAYERS[LAYERS.index(layer) + 1:]
    return ["//profiler/%s:__subpackages__" % p for p in above] + [
        "//profiler:__pkg__",
    ] + OUTSIDE
