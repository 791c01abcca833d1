#include "tracer/trace_shapes.h"

#include <functional>
#include <map>

#include "tracer/graph_binding.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {

namespace {

// tensor() of a longer list stays an opaque call: typing it guards the type
// of every element.
constexpr size_t kMaxScalarList = 16;

// The IR type of a number (None: not a number).
IRType number_type(const Value& x) {
  return x.is_int() ? IRType::Int : x.is_float() ? IRType::Float : x.is_bool() ? IRType::Bool : IRType::None;
}

// A nested list of numbers as tensor() reads it: its dims (each level's
// length, from its first elements) and its numbers in order.
struct NumberList {
  std::vector<int> dims;
  std::vector<const Value*> numbers;
};

bool walk_numbers(const Value& v, size_t depth, NumberList& out) {
  if (depth == out.dims.size()) {
    if (number_type(v) == IRType::None || out.numbers.size() == kMaxScalarList) return false;
    out.numbers.push_back(&v);
    return true;
  }
  if (!v.is_list() || v.as_list()->items.size() != static_cast<size_t>(out.dims[depth])) return false;
  for (const Value& x : v.as_list()->items)
    if (!walk_numbers(x, depth + 1, out)) return false;
  return true;
}

// None where `v` is not one (ragged, a leaf that is not a number: the
// interpreter raises) or holds more than kMaxScalarList numbers.
std::optional<NumberList> number_list(const Value& v) {
  NumberList l;
  for (const Value* p = &v; p->is_list(); p = &p->as_list()->items[0]) {
    if (l.dims.size() == kMaxRank) return std::nullopt;
    l.dims.push_back(static_cast<int>(std::min<size_t>(p->as_list()->items.size(), kMaxScalarList + 1)));
    if (p->as_list()->items.empty()) break;
  }
  if (!walk_numbers(v, 0, l)) return std::nullopt;
  return l;
}

}  // namespace

int TraceShapes::find(int s) const {
  while (parent_[s] != s) s = parent_[s] = parent_[parent_[s]];
  return s;
}

std::vector<int> TraceShapes::canonical(std::vector<int> dims) const {
  for (int& d : dims)
    if (d >= 0) d = find(d);  // not kDimOne, nor a shape's kDimInfer
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
                                                     const std::vector<const Value*>& values, uint16_t snap) {
  const std::optional<OpId> op = graph_op(t);
  if (!op) return nullptr;
  const std::optional<BoundCall> bound = bind_call(ir, t, op_def(*op), args, &values);
  if (!bound) return nullptr;
  auto how = [&](size_t i) -> std::optional<ValueArg> {
    for (const auto& [pos, h] : bound->value_args)
      if (pos == i) return h;
    return std::nullopt;
  };
  auto seen_list = [&](size_t i) -> const std::vector<Value>* {
    if (i >= values.size() || !values[i] || !values[i]->is_list() || ir[args[i]].type != IRType::List) return nullptr;
    return &values[i]->as_list()->items;
  };
  // A one-op region over the trace's symbols; a tensor that enters the
  // graph here, and a shape's elements, get new ones, numbered after them.
  Region r;
  r.types_only = true;
  r.num_symbols = num_symbols();
  r.symbol_sizes = size_;
  struct Entering {
    IRRef x;          // the tensor; kNoRef: element `index` of `list`, loaded below
    int input;        // its region input
    IRRef list = kNoRef;
    size_t index = 0;
  };
  std::vector<Entering> entering;
  std::vector<std::pair<IRRef, int>> shapes;  // a shape list and its region input
  int new_symbols = 0;
  auto enter = [&](const TensorObj& seen) {
    std::vector<int> dims;
    for (int64_t n : seen.shape) {
      if (n == 1) {
        dims.push_back(kDimOne);
        continue;
      }
      dims.push_back(r.new_symbol(n));
      ++new_symbols;
    }
    return r.add_tensor_input(seen.dtype, std::move(dims));
  };
  std::map<IRRef, int> value_of;
  std::vector<int> rargs;
  RegionAttrs attrs = bound->attrs;  // and tensor()'s dims
  for (size_t i : bound->inputs) {
    const IRRef a = args[i];
    const std::optional<ValueArg> h = how(i);
    if (h == ValueArg::Shape) {  // its elements: a dim each (1, -1, or a new symbol)
      const std::vector<Value>* items = seen_list(i);
      if (!items || items->size() > kMaxRank) return nullptr;
      std::vector<int> dims;
      for (const Value& x : *items) {
        if (!x.is_int() || x.as_int() < -1) return nullptr;  // the interpreter raises
        if (x.as_int() == 1 || x.as_int() == -1) {
          dims.push_back(x.as_int() == 1 ? kDimOne : kDimInfer);
          continue;
        }
        dims.push_back(r.new_symbol(x.as_int()));
        ++new_symbols;
      }
      rargs.push_back(r.add_shape_input(std::move(dims)));
      shapes.emplace_back(a, static_cast<int>(r.inputs.size() - 1));
      continue;
    }
    if (h == ValueArg::Scalars) {  // a (nested) list of a few numbers: a scalar input each
      std::optional<NumberList> l;
      if (seen_list(i)) l = number_list(*values[i]);
      if (!l) return nullptr;
      for (const Value* x : l->numbers) rargs.push_back(r.add_scalar_input(*scalar_kind(number_type(*x))));
      attrs.axes = l->dims;
      continue;
    }
    if (h == ValueArg::Tensors) {  // its elements: tensors entering the graph
      const std::vector<Value>* items = seen_list(i);
      if (!items || items->empty()) return nullptr;
      for (size_t k = 0; k < items->size(); ++k) {
        if (!(*items)[k].is_tensor()) return nullptr;
        rargs.push_back(enter(*(*items)[k].as_tensor()));
        entering.push_back({kNoRef, static_cast<int>(r.inputs.size() - 1), a, k});
      }
      continue;
    }
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
        v = enter(*values[i]->as_tensor());
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
  const int entered = num_symbols() + new_symbols;
  if (!r.add(*op, rargs, attrs) || r.num_symbols < entered) return nullptr;
  // Grouped-query heads are typed by the ratio of the sizes they had (guarded below).
  if (const auto h = attention_group_heads(r, r.ops.front())) {
    const auto seen = [&](int s) { return static_cast<size_t>(s) < r.symbol_sizes.size() ? r.symbol_sizes[s] : -1; };
    if (seen(h->first) <= 0 || seen(h->second) <= 0) return nullptr;
  }
  // Typed: the new symbols join the table (those the op made for its
  // result have their sizes read off it: set_result), the arguments the
  // type depends on are guarded, and the symbols the op made one merged.
  for (int k = num_symbols(); k < r.num_symbols; ++k) {
    parent_.push_back(k);
    size_.push_back(k < entered ? r.symbol_sizes[static_cast<size_t>(k)] : -1);
    dim_.push_back(kNoRef);
  }
  auto guard = [&](IRRef cond) { ir.emit(IROp::GUARDT, IRType::None, cond, 0, snap); };
  auto guard_eq = [&](IRRef a, IRRef b) { guard(ir.emit(IROp::EQ, IRType::Bool, a, b)); };
  // A list's elements, its length guarded: loaded with their types guarded
  // (each `ty`, or the type of each value in `seen`).
  auto elements = [&](IRRef list, IRType ty, size_t n, const std::vector<Value>* seen = nullptr) {
    guard_eq(ir.emit(IROp::LLEN, IRType::Int, list), ir.kint(static_cast<int64_t>(n)));
    std::vector<IRRef> xs;
    for (size_t k = 0; k < n; ++k)
      xs.push_back(ir.emit(IROp::LLOAD, seen ? number_type((*seen)[k]) : ty, list, ir.kint(static_cast<int64_t>(k)), snap));
    return xs;
  };
  for (size_t p : bound->pinned) {  // an axis, a permutation, an attribute: the values recorded
    const Value& pv = *values[p];
    if (pv.is_int() || pv.is_bool() || pv.is_float() || pv.is_dtype()) {
      guard_eq(args[p], pv.is_int()     ? ir.kint(pv.as_int())
                        : pv.is_bool()  ? ir.kbool(pv.as_bool())
                        : pv.is_dtype() ? ir.kdtype(pv.as_dtype())
                                        : ir.kfloat(pv.as_float()));
      continue;
    }
    const std::vector<Value>& items = *seen_list(p);
    const std::vector<IRRef> xs = elements(args[p], IRType::Int, items.size());
    for (size_t k = 0; k < xs.size(); ++k) guard_eq(xs[k], ir.kint(items[k].as_int()));
  }
  for (const auto& [list, input] : shapes) {  // each element the dim it gives
    const std::vector<int>& dims = before[static_cast<size_t>(input)].dims;
    const std::vector<IRRef> xs = elements(list, IRType::Int, dims.size());
    for (size_t k = 0; k < xs.size(); ++k) {
      if (dims[k] == kDimOne) guard_eq(xs[k], ir.kint(1));
      else if (dims[k] != kDimInfer) {
        guard(ir.emit(IROp::GE, IRType::Bool, xs[k], ir.kint(0)));  // (reshape: not a -1 now)
        dim_[dims[k]] = xs[k];
      }
    }
  }
  // A nested list of numbers: each level's length guarded, its lists and
  // numbers loaded with their types guarded.
  std::function<void(IRRef, const Value&, size_t)> numbers = [&](IRRef list, const Value& v, size_t depth) {
    const std::vector<Value>& items = v.as_list()->items;
    const bool leaves = depth + 1 == attrs.axes.size();
    const std::vector<IRRef> xs = elements(list, IRType::List, items.size(), leaves ? &items : nullptr);
    if (!leaves)
      for (size_t k = 0; k < xs.size(); ++k) numbers(xs[k], items[k], depth + 1);
  };
  for (size_t i : bound->inputs)
    if (how(i) == ValueArg::Scalars) numbers(args[i], *values[i], 0);
  for (size_t i : bound->inputs) {  // a list of tensors: its elements loaded
    if (how(i) != ValueArg::Tensors) continue;
    const std::vector<IRRef> xs = elements(args[i], IRType::Tensor, seen_list(i)->size());
    for (Entering& e : entering)
      if (e.list == args[i]) e.x = xs[e.index];
  }
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
      if (before[i].dims[k] == r.inputs[i].dims[k] || before[i].dims[k] < 0 || r.inputs[i].dims[k] < 0) continue;
      int a = find(before[i].dims[k]), b = find(r.inputs[i].dims[k]);
      if (a == b) continue;
      if (b < a) std::swap(a, b);
      guard_eq(dim_[b], dim_[a]);
      parent_[b] = a;
    }
  for (RegionType& in : r.inputs) in.dims = canonical(std::move(in.dims));
  for (RegionOp& o : r.ops) o.type.dims = canonical(std::move(o.type.dims));
  // Grouped-query attention: no merge relates q's heads to k's, so the
  // ratio g recorded is guarded (Hq == g * Hkv); the result's heads are then
  // q's for every size, as plain attention's are (Hkv 1 or 0 broadcasts).
  if (const auto h = attention_group_heads(r, r.ops.front())) {
    const int64_t g = size_[h->first] / size_[h->second];
    guard_eq(dim_[h->first], ir.emit(IROp::MUL, IRType::Int, dim_[h->second], ir.kint(g)));
  }
  r.num_symbols = num_symbols();
  r.symbol_sizes = size_;
  for (const Entering& e : entering) types_[e.x] = r.inputs[static_cast<size_t>(e.input)];
  return std::make_shared<const Region>(std::move(r));
}

void TraceShapes::set_result(TraceIR& ir, IRRef v, const Region& graph, const Value& seen) {
  if (graph.ops.size() != 1 || !seen.is_tensor()) return;
  RegionType t = graph.ops[0].type;
  t.dims = canonical(std::move(t.dims));
  const TensorObj& x = *seen.as_tensor();
  if (!t.tensor || t.dtype != x.dtype || t.dims.size() != x.shape.size()) return;
  for (size_t k = 0; k < t.dims.size(); ++k) {
    if (t.dims[k] == kDimOne ? x.shape[k] != 1 : size_[t.dims[k]] >= 0 && x.shape[k] != size_[t.dims[k]]) return;
  }
  // The dims no operand gave (size unknown): read off the result.
  for (size_t k = 0; k < t.dims.size(); ++k) {
    const int s = t.dims[k];
    if (s == kDimOne || size_[s] >= 0) continue;
    size_[s] = x.shape[k];
    dim_[s] = ir.emit(IROp::TDIM, IRType::Int, v, static_cast<uint32_t>(k));
  }
  types_[v] = std::move(t);
}

}  // namespace tessera::jit
