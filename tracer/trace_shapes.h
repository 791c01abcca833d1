// TraceShapes: the tensor types of one recording, with dims as symbols of
// one per-trace table (docs/tensor-jit.md, Recording).
//
// The recorder asks it to type each call of a Graph IR operation (the op
// table's row, bound by graph_binding.h). Each tensor that enters the
// trace's graph (a register or global load, or the result of a call that is
// not typed) gets a symbol per dim of the size it has (a dim of size 1 is
// kDimOne), guarded once: dtype, rank, and TDIM == 1 for its 1s; its other
// dims are read there (TDIM: an int, which outlives the tensor). The op's
// result type comes from the op table's rules as fusion applies them
// (Region::add on a one-op region whose symbols are the trace's), so the
// result of a typed call needs no guard. Where those rules make two
// symbols one (a broadcast's two sides, a matmul's inner dims, attention's
// head dims), the table merges them and guards that the two sizes (as read
// where they entered) are equal: from there on one symbol, and one guard,
// covers both. Dims equal
// by chance keep symbols of their own. The sizes themselves are never
// guarded: a trace serves every size its symbols take.
//
// The rules are the type rules alone (a region of types only, region.h):
// what no kernel computes is typed too (a reduction along any axis, the
// integer and double paths, transpose and permute). Shapes that come from
// values are typed from the values' IR: a shape list's elements are loaded
// (its length guarded) and each is the size of its dim's symbol (a 1
// guarded to stay 1, the others >= 0); an axis, a permutation or an
// attribute (axis=, keepdim=, cast's dtype) that is not a constant is
// guarded to keep the value recorded; a list of tensors
// (concat) is loaded and its elements enter the graph, a (nested) list of
// a few numbers (tensor()) is loaded with each number's type and each
// list's length guarded; a dim no operand
// gives (slice's axis, arange's length, reshape's -1, concat's axis) is a
// new symbol whose size is read off the result (TDIM), with no guard. The
// typed call keeps its one-op region (CallTarget::graph), printed after its
// CALL line in the text form. Calls without such rules (tensor() of a
// long list, whose dtype comes from every element; a call the interpreter
// raises on) stay opaque helper calls, and their tensor results enter the
// graph where they are used.
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tracer/trace_ir.h"
#include "vm/core/value.h"
#include "vm/graph/region.h"

namespace tessera::jit {

class TraceShapes {
 public:
  // Types call `t` on argument values `args` (their current values in
  // `values`, as call_helper gets them): emits the guards its inputs need
  // into `ir`, exiting through snapshot `snap` (the call's: before it), and
  // returns the one-op region, or nullptr (nothing emitted) where the call
  // is not a Graph IR operation the rules type.
  std::shared_ptr<const Region> type_call(TraceIR& ir, const CallTarget& t, const std::vector<IRRef>& args,
                                          const std::vector<const Value*>& values, uint16_t snap);

  // Records that IR value `v` (the reload of a typed call's result, whose
  // value is `seen`) has the type of `graph`'s result, and reads the sizes
  // of the dims no operand gave off it (TDIM on v, emitted into `ir`); a
  // value that does not fit the type (which the rules should never give)
  // stays untyped and enters the graph, guarded, where it is used.
  void set_result(TraceIR& ir, IRRef v, const Region& graph, const Value& seen);

  // The symbolic type of IR value v, if typed (dims are current symbols).
  std::optional<RegionType> type_of(IRRef v) const;
  int num_symbols() const { return static_cast<int>(parent_.size()); }
  // The symbol that s is one with (merged symbols share their oldest).
  int find(int s) const;

 private:
  std::vector<int> canonical(std::vector<int> dims) const;

  mutable std::vector<int> parent_;  // merged symbols: union-find
  std::vector<int64_t> size_;        // the size each symbol had
  // Each symbol's size in the trace: the TDIM of the tensor that brought it,
  // read where it entered (an int, which outlives the tensor).
  std::vector<IRRef> dim_;
  std::unordered_map<IRRef, RegionType> types_;
};

}  // namespace tessera::jit
