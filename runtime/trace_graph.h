// The trace tree of a run as a Graphviz graph (--dump DIR: traces.dot, and
// traces.svg where Graphviz's `dot` is installed): what a researcher draws
// by hand from --stats otherwise.
//
//   - a box per trace: root traces (loop, function) and side traces, with
//     where they start, their tier, size and entries; a dropped or
//     invalidated trace is grey and says so;
//   - an edge from a trace to the side trace attached at one of its exits,
//     labelled with the exit, its line and how often it was taken before;
//   - an edge to the interpreter for every other exit that was taken, with
//     the count;
//   - a dashed edge for each link (a side trace jumping into a trace at its
//     end) and for each loop trace's own loop;
//   - a grey box per blacklisted loop or function;
//   - a box per fused kernel a trace calls (its operations), with a dotted
//     edge from each trace that calls it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/trace.h"

namespace tessera::jit {

struct BlacklistedRoot {
  std::string kind;  // "loop" or "function"
  int line = 0;
};

// The graph's text; `script` names the lines ("loop.tsb:12").
std::string trace_tree_dot(const std::vector<std::unique_ptr<Trace>>& traces,
                           const std::vector<BlacklistedRoot>& blacklisted, const std::string& script);

// Writes DIR/traces.dot and, when `dot` is on PATH, DIR/traces.svg (a tree
// of over 200 edges laid out quickly, straight edges; no layout may take
// over 20 s).
// Returns why there is no SVG (empty when it was written); throws
// std::runtime_error when traces.dot cannot be written.
std::string write_trace_tree(const std::string& dir, const std::string& dot_text);

}  // namespace tessera::jit
