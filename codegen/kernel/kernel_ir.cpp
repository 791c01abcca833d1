#include "codegen/kernel/kernel_ir.h"

#include <stdexcept>

#include "codegen/kernel/kernel_verify.h"

namespace tessera::kir {

namespace {

constexpr KOpInfo kOps[] = {
#define KOP(Id, name, shape, min_ops, max_ops, flags, doc) {name, KShape::shape, min_ops, max_ops, flags, doc},
#include "codegen/kernel/kernel_ops.def"
#undef KOP
};
static_assert(std::size(kOps) == static_cast<size_t>(KOp::NumOps));

constexpr const char* kElems[] = {"i1", "i32", "i64", "f16", "bf16", "f32", "f64"};
constexpr const char* kPreds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
constexpr const char* kReduces[] = {"sum", "max", "min", "argmax"};

}  // namespace

const KOpInfo& op_info(KOp op) { return kOps[static_cast<size_t>(op)]; }

std::optional<KOp> op_by_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (name == kOps[i].name) return static_cast<KOp>(i);
  return std::nullopt;
}

const char* elem_name(Elem e) { return kElems[static_cast<size_t>(e)]; }
std::optional<Elem> elem_by_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kElems); ++i)
    if (name == kElems[i]) return static_cast<Elem>(i);
  return std::nullopt;
}
const char* pred_name(Pred p) { return kPreds[static_cast<size_t>(p)]; }
const char* reduce_name(ReduceKind r) { return kReduces[static_cast<size_t>(r)]; }

int64_t Type::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string type_str(const Type& t) {
  if (!t.is_tile()) return elem_name(t.elem);
  std::string s = "tile<";
  for (int64_t d : t.shape) s += std::to_string(d) + "x";
  return s + elem_name(t.elem) + ">";
}

ValueId Kernel::new_value(Type t, std::string name) {
  values_.push_back(ValueInfo{std::move(t), std::move(name)});
  return static_cast<ValueId>(values_.size() - 1);
}

int Kernel::param_index(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return static_cast<int>(i);
  return -1;
}

int Kernel::dim_index(std::string_view n) const {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] == n) return static_cast<int>(i);
  return -1;
}

std::vector<int64_t> Kernel::grid_extents(const std::vector<int64_t>& dim_vals) const {
  std::vector<int64_t> g(3, 1);
  for (size_t a = 0; a < grid.size(); ++a) {
    const Extent& e = grid[a];
    int64_t v = e.factor;
    for (int d : e.dims) v *= dim_vals.at(static_cast<size_t>(d));
    g[a] = (v + e.div - 1) / e.div;
  }
  return g;
}

bool Kernel::specialized() const {
  if (dim_values.size() != dims.size()) return false;
  for (const auto& v : dim_values)
    if (!v) return false;
  return true;
}

// ---------------------------------------------------------------- builder

Inst& KernelBuilder::emit(KOp op, std::vector<ValueId> operands, std::optional<Type> result) {
  Inst in;
  in.op = op;
  in.operands = std::move(operands);
  block_->insts.push_back(std::move(in));
  Inst& ref = block_->insts.back();
  if (result) ref.results.push_back(k_.new_value(*result));
  return ref;
}

namespace {
// Appends inst to the block after typing it; drops it again if the rules refuse it.
ValueId typed(Kernel& k, Block& b, Inst in) {
  Type t = infer_result(k, in);
  in.results.push_back(k.new_value(std::move(t)));
  b.insts.push_back(std::move(in));
  return b.insts.back().results[0];
}

Inst make(KOp op, std::vector<ValueId> operands) {
  Inst in;
  in.op = op;
  in.operands = std::move(operands);
  return in;
}
}  // namespace

ValueId KernelBuilder::const_float(double v, Elem e) {
  if (!elem_is_float(e)) throw std::invalid_argument("const_float: not a float type");
  Inst in = make(KOp::Const, {});
  in.fvalue = v;
  in.results.push_back(k_.new_value(Type{e, {}}));
  block_->insts.push_back(std::move(in));
  return block_->insts.back().results[0];
}

ValueId KernelBuilder::const_int(int64_t v, Elem e) {
  if (elem_is_float(e)) throw std::invalid_argument("const_int: not an int type");
  Inst in = make(KOp::Const, {});
  in.ivalue = v;
  in.results.push_back(k_.new_value(Type{e, {}}));
  block_->insts.push_back(std::move(in));
  return block_->insts.back().results[0];
}

ValueId KernelBuilder::dim(int d) {
  Inst in = make(KOp::Dim, {});
  in.index = d;
  return typed(k_, *block_, std::move(in));
}

ValueId KernelBuilder::program_id(int axis) {
  Inst in = make(KOp::ProgramId, {});
  in.index = axis;
  return typed(k_, *block_, std::move(in));
}

ValueId KernelBuilder::range(int64_t n) {
  if (n < 1) throw std::invalid_argument("range: size must be positive");
  return emit(KOp::Range, {}, Type{Elem::I64, {n}}).results[0];
}

ValueId KernelBuilder::splat(ValueId scalar, std::vector<int64_t> shape) {
  if (shape.empty()) throw std::invalid_argument("splat: the result must be a tile");
  Inst& in = emit(KOp::Splat, {scalar}, Type{type(scalar).elem, std::move(shape)});
  infer_result(k_, in);  // checks the operand
  return in.results[0];
}

ValueId KernelBuilder::broadcast(ValueId tile, int axis, int64_t n) {
  Type t = type(tile);
  if (axis < 0 || static_cast<size_t>(axis) > t.shape.size())
    throw std::invalid_argument("broadcast: axis out of range");
  t.shape.insert(t.shape.begin() + axis, n);
  Inst& in = emit(KOp::Broadcast, {tile}, t);
  in.index = axis;
  infer_result(k_, in);
  return in.results[0];
}

ValueId KernelBuilder::trans(ValueId tile) { return typed(k_, *block_, make(KOp::Trans, {tile})); }
ValueId KernelBuilder::unary(KOp op, ValueId x) { return typed(k_, *block_, make(op, {x})); }
ValueId KernelBuilder::binary(KOp op, ValueId a, ValueId b) { return typed(k_, *block_, make(op, {a, b})); }

ValueId KernelBuilder::cmp(Pred p, ValueId a, ValueId b) {
  Inst in = make(KOp::Cmp, {a, b});
  in.pred = p;
  return typed(k_, *block_, std::move(in));
}

ValueId KernelBuilder::select(ValueId mask, ValueId a, ValueId b) {
  return typed(k_, *block_, make(KOp::Select, {mask, a, b}));
}

ValueId KernelBuilder::cast(ValueId x, Elem to) {
  Inst& in = emit(KOp::Cast, {x}, Type{to, type(x).shape});
  infer_result(k_, in);
  return in.results[0];
}

ValueId KernelBuilder::load(int param, ValueId offset, std::optional<ValueId> mask, std::optional<ValueId> other) {
  if (other && !mask) throw std::invalid_argument("load: `other` needs a mask");
  Inst in = make(KOp::Load, {offset});
  if (mask) in.operands.push_back(*mask);
  if (other) in.operands.push_back(*other);
  in.index = param;
  return typed(k_, *block_, std::move(in));
}

ValueId KernelBuilder::load_block(int param, ValueId base, ValueId r0, ValueId c0, ValueId nrows, ValueId ncols,
                                  ValueId stride, int64_t rows, int64_t cols, bool transposed) {
  if (param < 0 || static_cast<size_t>(param) >= k_.params.size()) throw std::invalid_argument("load_block: no such param");
  Inst& in = emit(KOp::BlockLoad, {base, r0, c0, nrows, ncols, stride},
                  Type{k_.params[static_cast<size_t>(param)].elem, {rows, cols}});
  in.index = param;
  in.transposed = transposed;
  infer_result(k_, in);  // checks the operands
  return in.results[0];
}

void KernelBuilder::store(int param, ValueId offset, ValueId v, std::optional<ValueId> mask) {
  Inst in = make(KOp::Store, {offset, v});
  if (mask) in.operands.push_back(*mask);
  in.index = param;
  infer_result(k_, in);  // checks; gives no value
  block_->insts.push_back(std::move(in));
}

ValueId KernelBuilder::reduce(ReduceKind r, ValueId tile, int axis, std::optional<Elem> acc) {
  Inst in = make(KOp::Reduce, {tile});
  in.reduce = r;
  in.index = axis;
  if (!acc) return typed(k_, *block_, std::move(in));
  Type t = type(tile);
  if (axis < 0 || static_cast<size_t>(axis) >= t.shape.size()) throw std::invalid_argument("reduce: axis out of range");
  t.shape.erase(t.shape.begin() + axis);
  t.elem = *acc;
  in.results.push_back(k_.new_value(t));
  if (!(infer_result(k_, in) == t)) throw std::invalid_argument("reduce: no such accumulator type");
  block_->insts.push_back(std::move(in));
  return block_->insts.back().results[0];
}

ValueId KernelBuilder::dot(ValueId a, ValueId b, ValueId acc) { return typed(k_, *block_, make(KOp::Dot, {a, b, acc})); }

std::vector<ValueId> KernelBuilder::begin_for(ValueId lo, ValueId hi, ValueId step, const std::vector<ValueId>& inits) {
  for (ValueId v : {lo, hi, step})
    if (type(v) != Type{Elem::I64, {}}) throw std::invalid_argument("for: bounds and step must be i64 scalars");
  Inst in = make(KOp::For, {lo, hi, step});
  in.body = std::make_unique<Block>();
  in.body->args.push_back(k_.new_value(Type{Elem::I64, {}}));
  for (ValueId v : inits) {
    in.operands.push_back(v);
    in.body->args.push_back(k_.new_value(type(v)));
  }
  block_->insts.push_back(std::move(in));
  loops_.emplace_back(block_, block_->insts.size() - 1);
  Block* body = block_->insts.back().body.get();
  block_ = body;
  return body->args;
}

std::vector<ValueId> KernelBuilder::end_for(const std::vector<ValueId>& next) {
  if (loops_.empty()) throw std::invalid_argument("end_for without begin_for");
  auto [outer, index] = loops_.back();
  Inst& loop = outer->insts[index];
  if (next.size() != loop.operands.size() - 3) throw std::invalid_argument("end_for: one value per iter value");
  for (size_t i = 0; i < next.size(); ++i)
    if (!(type(next[i]) == type(loop.operands[3 + i])))
      throw std::invalid_argument("end_for: a next value's type differs from its iter value's");
  Inst y = make(KOp::Yield, next);
  block_->insts.push_back(std::move(y));
  for (size_t i = 0; i < next.size(); ++i) loop.results.push_back(k_.new_value(type(next[i])));
  loops_.pop_back();
  block_ = outer;
  return loop.results;
}

ValueId KernelBuilder::named(ValueId v, std::string name) {
  k_.value(v).name = std::move(name);
  return v;
}

}  // namespace tessera::kir
