#include "tracer/trace_shapes.h"

#include <map>

#include "tracer/graph_binding.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {

int TraceShapes::find(int s) const {
  while (parent_[s] != s) s = parent_[s] = parent_[parent_[s]];
  return s;
}

std::vector<int> TraceShapes::canonical(std::vector<int> dims) const {
  for (int& d : dims)
    if (d != kDimOne) d = find(d);
  return dims;
}

std::optional<RegionType> TraceShapes::type_of(IRRef v) const {
  auto it = types_.find(v);
  if (it == types_.end()) return std::nullopt;
  RegionType t = it->second;
  t.dims = canonical(std::move(t.dims));
  return t;
}

std::shared_ptr<const Region> TraceShapes::type_call(TraceIR& ir, const CallTarget& t,
                                                     const std::vector<IRRef>& args,
                                                     const std::vector<const Value*>& values,
                                                     const GuardFn& guard) {
  const std::optional<OpId> op = graph_op(t);
  if (!op) return nullptr;
  const std::optional<BoundCall> bound = bind_call(ir, t, op_def(*op), args);
  if (!bound) return nullptr;
  // A one-op region over the trace's symbols; a tensor that enters the
  // graph here gets new ones, numbered after them.
  Region r;
  r.types_only = true;
  r.num_symbols = num_symbols();
  r.symbol_sizes = size_;
  struct Entering {
    IRRef x;
    int input;  // its region input
  };
  std::vector<Entering> entering;
  int new_symbols = 0;
  std::map<IRRef, int> value_of;
  std::vector<int> rargs;
  for (size_t i : bound->inputs) {
    const IRRef a = args[i];
    if (auto it = value_of.find(a); it != value_of.end()) {
      rargs.push_back(it->second);
      continue;
    }
    int v;
    const IRType ty = ir[a].type;
    if (ty == IRType::Tensor) {
      if (std::optional<RegionType> known = type_of(a)) {
        v = r.add_tensor_input(known->dtype, known->dims);
      } else {
        if (i >= values.size() || !values[i] || !values[i]->is_tensor()) return nullptr;
        const TensorObj& seen = *values[i]->as_tensor();
        std::vector<int> dims;
        for (size_t k = 0; k < seen.shape.size(); ++k) {
          if (seen.shape[k] == 1) {
            dims.push_back(kDimOne);
            continue;
          }
          dims.push_back(r.new_symbol(seen.shape[k]));
          ++new_symbols;
        }
        v = r.add_tensor_input(seen.dtype, std::move(dims));
        entering.push_back({a, static_cast<int>(r.inputs.size() - 1)});
      }
    } else if (const std::optional<ScalarKind> k = scalar_kind(ty)) {
      v = r.add_scalar_input(*k);
    } else {
      return nullptr;
    }
    rargs.push_back(value_of[a] = v);
  }
  const std::vector<RegionType> before = r.inputs;
  if (!r.add(*op, rargs, bound->attrs) || r.num_symbols != num_symbols() + new_symbols) return nullptr;
  // Typed: the new symbols join the table, entering tensors are guarded,
  // and the symbols the op made one are merged.
  for (int k = 0; k < new_symbols; ++k) {
    parent_.push_back(static_cast<int>(parent_.size()));
    size_.push_back(r.symbol_sizes[parent_.size() - 1]);
    dim_.push_back(kNoRef);
  }
  auto guard_eq = [&](IRRef a, IRRef b) { guard(ir.emit(IROp::EQ, IRType::Bool, a, b)); };
  for (const Entering& e : entering) {
    const RegionType& ty = before[static_cast<size_t>(e.input)];
    guard_eq(ir.emit(IROp::TDTYPE, IRType::Int, e.x), ir.kint(static_cast<int64_t>(ty.dtype)));
    guard_eq(ir.emit(IROp::TRANK, IRType::Int, e.x), ir.kint(static_cast<int64_t>(ty.dims.size())));
    for (size_t k = 0; k < ty.dims.size(); ++k) {
      const IRRef d = ir.emit(IROp::TDIM, IRType::Int, e.x, static_cast<uint32_t>(k));
      if (ty.dims[k] == kDimOne) guard_eq(d, ir.kint(1));
      else dim_[ty.dims[k]] = d;
    }
  }
  // Symbols the op made one: their sizes (as the tensors that brought them
  // had them) are guarded equal, and they become one symbol, the oldest.
  for (size_t i = 0; i < before.size(); ++i)
    for (size_t k = 0; k < before[i].dims.size(); ++k) {
      if (before[i].dims[k] == r.inputs[i].dims[k]) continue;
      int a = find(before[i].dims[k]), b = find(r.inputs[i].dims[k]);
      if (a == b) continue;
      if (b < a) std::swap(a, b);
      guard_eq(dim_[b], dim_[a]);
      parent_[b] = a;
    }
  for (RegionType& in : r.inputs) in.dims = canonical(std::move(in.dims));
  for (RegionOp& o : r.ops) o.type.dims = canonical(std::move(o.type.dims));
  r.num_symbols = num_symbols();
  r.symbol_sizes = size_;
  for (const Entering& e : entering) types_[e.x] = r.inputs[static_cast<size_t>(e.input)];
  return std::make_shared<const Region>(std::move(r));
}

void TraceShapes::set_result(IRRef v, const Region& graph, const Value& seen) {
  if (graph.ops.size() != 1 || !seen.is_tensor()) return;
  RegionType t = graph.ops[0].type;
  t.dims = canonical(std::move(t.dims));
  const TensorObj& x = *seen.as_tensor();
  if (!t.tensor || t.dtype != x.dtype || t.dims.size() != x.shape.size()) return;
  for (size_t k = 0; k < t.dims.size(); ++k)
    if (t.dims[k] == kDimOne ? x.shape[k] != 1 : x.shape[k] != size_[t.dims[k]]) return;
  types_[v] = std::move(t);
}

}  // namespace tessera::jit
