// The result tree as data for scripts: JSON (the displayed tree) and CSV
// (one row per displayed node), with raw numbers (microseconds, bytes,
// counts), self and total values of every selected attribute.
#ifndef TFPROF_PROFILER_RENDER_RENDER_JSON_CSV_H_
#define TFPROF_PROFILER_RENDER_RENDER_JSON_CSV_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "profiler/views/result.h"

namespace tfprof {

// {"view", "step", "select", "units", "root": {name, accounted, <attribute>:
// {self, total}, ..., children: [...]}}.
std::string RenderJson(const ResultTree& result);

// Part of the displayed tree, for clients that load it a level at a time:
// node `node` and `levels` levels below it (0: the node alone), its own
// children cut to [offset, offset + limit). Nodes carry RenderJson's fields
// plus "id" (the node's index, the same for the same query) and
// "child_count"; a node shown without its children has no "children" key.
// "null" when there is no such node.
// With `keep`, children it refuses (and their subtrees) are left out; a node
// that lost some says how many in "hidden_children".
struct JsonLevels {
  size_t node = 0;
  int levels = 1;
  size_t offset = 0;
  size_t limit = SIZE_MAX;
  std::function<bool(const ResultNode&)> keep;
};
std::string RenderJsonLevels(const ResultTree& result, const JsonLevels& cut);

// A header, then one row per displayed node: tree views in pre-order with a
// depth column, the op view in its row order.
std::string RenderCsv(const ResultTree& result);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_JSON_CSV_H_
