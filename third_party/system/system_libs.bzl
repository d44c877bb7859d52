"""Exposes Debian's system libraries as cc_library targets.

Purely local: runs pkg-config (and gcc, to check a library is there) on the
host and never downloads anything. A library with a pkg-config file is given
by its modules in `libs`; one without (libleveldb-dev ships none) by its
plain link flags in `link_flags`.
"""

def _cc_library(name, flags, defines = []):
    # Headers are in /usr/include, a builtin include directory of the
    # autodetected gcc toolchain, so only --cflags' -D flags are kept (a
    # library built with features on declares more in its headers).
    return [
        "cc_library(",
        '    name = "%s",' % name,
        "    linkopts = %r," % flags,
        "    defines = %r," % defines,
        ")",
        "",
    ]

def _check_linkable(rctx, name, flags):
    """Fails early, naming the -dev package's library, if a -lNAME is missing."""
    gcc = rctx.which("gcc")
    if gcc == None:
        return  # the build itself will say what is missing
    for f in flags:
        if not f.startswith("-l"):
            continue
        lib = "lib%s.so" % f[2:]
        res = rctx.execute([gcc, "-print-file-name=" + lib])

        # gcc prints the bare name back when it finds no such file.
        if res.return_code != 0 or res.stdout.strip() == lib:
            fail("%s: %s not found (missing -dev package? run scripts/setup.sh)" %
                 (name, lib))

def _system_libs_impl(rctx):
    pkg_config = rctx.which("pkg-config")
    if pkg_config == None:
        fail("pkg-config not found: run scripts/setup.sh")
    out = ['package(default_visibility = ["//visibility:public"])', ""]
    for name, modules in rctx.attr.libs.items():
        res = rctx.execute([pkg_config, "--libs"] + modules)
        if res.return_code != 0:
            fail("pkg-config --libs %s failed (missing -dev package? run scripts/setup.sh): %s" %
                 (" ".join(modules), res.stderr))
        flags = [f for f in res.stdout.strip().split(" ") if f]
        cflags = rctx.execute([pkg_config, "--cflags"] + modules)
        defines = [f[2:] for f in cflags.stdout.strip().split(" ") if f.startswith("-D")]
        out += _cc_library(name, flags, defines)
    for name, flags in rctx.attr.link_flags.items():
        if name in rctx.attr.libs:
            fail("%s is in both libs and link_flags" % name)
        _check_linkable(rctx, name, flags)
        out += _cc_library(name, flags)
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    rctx.file("BUILD", "\n".join(out))

system_libs = repository_rule(
    implementation = _system_libs_impl,
    attrs = {
        # name -> pkg-config modules
        "libs": attr.string_list_dict(mandatory = True),
        # name -> link flags, for libraries without a pkg-config file
        "link_flags": attr.string_list_dict(),
    },
    local = True,
    environ = ["PKG_CONFIG_PATH"],
)
