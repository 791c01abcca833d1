// The kernel IR's typing rules and the whole-kernel verifier.
#include "codegen/kernel/kernel_verify.h"

#include <stdexcept>
#include <unordered_set>

namespace tessera::kir {

namespace {

[[noreturn]] void fail(const Inst& in, const std::string& what) {
  throw std::invalid_argument(std::string(op_info(in.op).name) + ": " + what);
}

const Type& operand(const Kernel& k, const Inst& in, size_t i) {
  if (i >= in.operands.size()) fail(in, "missing operand " + std::to_string(i));
  if (in.operands[i] >= k.num_values()) fail(in, "operand " + std::to_string(i) + " is not a value");
  return k.value(in.operands[i]).type;
}

const Type& declared(const Kernel& k, const Inst& in) {
  if (in.results.size() != 1 || in.results[0] >= k.num_values()) fail(in, "needs one result");
  return k.value(in.results[0]).type;
}

bool is_index(const Type& t) { return t.elem == Elem::I64; }

}  // namespace

Type infer_result(const Kernel& k, const Inst& in) {
  const KOpInfo& info = op_info(in.op);
  if (in.operands.size() < info.min_operands || in.operands.size() > info.max_operands)
    fail(in, "takes " + std::to_string(info.min_operands) + ".." + std::to_string(info.max_operands) +
                 " operands, got " + std::to_string(in.operands.size()));
  for (size_t i = 0; i < in.operands.size(); ++i) operand(k, in, i);
  auto need_float = [&](const Type& t) {
    if ((info.flags & Float) && !elem_is_float(t.elem)) fail(in, "needs a float type, got " + type_str(t));
  };
  switch (info.shape) {
    case KShape::Const: {
      const Type& t = declared(k, in);
      if (t.is_tile()) fail(in, "a constant is a scalar");
      return t;
    }
    case KShape::Dim:
      if (in.index < 0 || static_cast<size_t>(in.index) >= k.dims.size()) fail(in, "no dim #" + std::to_string(in.index));
      return Type{Elem::I64, {}};
    case KShape::ProgramId:
      if (in.index < 0 || static_cast<size_t>(in.index) >= k.grid.size())
        fail(in, "the grid has no axis " + std::to_string(in.index));
      return Type{Elem::I64, {}};
    case KShape::Range: {
      const Type& t = declared(k, in);
      if (t.shape.size() != 1 || t.elem != Elem::I64 || t.shape[0] < 1) fail(in, "gives a 1-D tile of i64");
      return t;
    }
    case KShape::Splat: {
      const Type& t = declared(k, in);
      const Type& x = operand(k, in, 0);
      if (x.is_tile() || !t.is_tile() || t.elem != x.elem) fail(in, "makes a tile of its scalar's type");
      return t;
    }
    case KShape::Broadcast: {
      const Type& t = declared(k, in);
      const Type& x = operand(k, in, 0);
      if (!x.is_tile() || t.elem != x.elem || t.shape.size() != x.shape.size() + 1 || in.index < 0 ||
          static_cast<size_t>(in.index) >= t.shape.size())
        fail(in, "adds one axis to a tile");
      std::vector<int64_t> rest = t.shape;
      rest.erase(rest.begin() + in.index);
      if (rest != x.shape) fail(in, type_str(x) + " does not broadcast to " + type_str(t) + " along axis " + std::to_string(in.index));
      return t;
    }
    case KShape::Trans: {
      Type t = operand(k, in, 0);
      if (t.shape.size() != 2) fail(in, "transposes a 2-D tile");
      std::swap(t.shape[0], t.shape[1]);
      return t;
    }
    case KShape::Unary: {
      const Type& x = operand(k, in, 0);
      need_float(x);
      if (x.elem == Elem::I1) fail(in, "not defined on i1");
      if (x.elem == Elem::F64 && in.op != KOp::Neg && in.op != KOp::Abs && in.op != KOp::Sqrt)
        fail(in, "not defined on f64 (neg, abs and sqrt are)");
      return x;
    }
    case KShape::Binary: {
      const Type& a = operand(k, in, 0);
      const Type& b = operand(k, in, 1);
      if (!(a == b)) fail(in, "operands differ: " + type_str(a) + " and " + type_str(b));
      need_float(a);
      if (a.elem == Elem::I1) fail(in, "not defined on i1");
      if ((in.op == KOp::Rem) && elem_is_float(a.elem)) fail(in, "is an int operation");
      if (in.op == KOp::Pow && a.elem == Elem::F64) fail(in, "not defined on f64");
      return a;
    }
    case KShape::Cmp: {
      const Type& a = operand(k, in, 0);
      const Type& b = operand(k, in, 1);
      if (!(a == b)) fail(in, "operands differ: " + type_str(a) + " and " + type_str(b));
      return Type{Elem::I1, a.shape};
    }
    case KShape::Select: {
      const Type& m = operand(k, in, 0);
      const Type& a = operand(k, in, 1);
      const Type& b = operand(k, in, 2);
      if (m.elem != Elem::I1 || m.shape != a.shape) fail(in, "the mask must be i1 of the values' shape");
      if (!(a == b)) fail(in, "operands differ: " + type_str(a) + " and " + type_str(b));
      return a;
    }
    case KShape::Cast: {
      const Type& t = declared(k, in);
      if (t.shape != operand(k, in, 0).shape) fail(in, "keeps the shape");
      return t;
    }
    case KShape::Load:
    case KShape::Store: {
      if (in.index < 0 || static_cast<size_t>(in.index) >= k.params.size())
        fail(in, "no param #" + std::to_string(in.index));
      const Param& p = k.params[in.index];
      const Type& off = operand(k, in, 0);
      if (!is_index(off)) fail(in, "offsets are i64, got " + type_str(off));
      const bool load = info.shape == KShape::Load;
      if (!load && !p.output) fail(in, "%" + p.name + " is an input");
      Type value{p.elem, off.shape};
      const size_t mask_at = load ? 1 : 2;
      if (!load && !(operand(k, in, 1) == value))
        fail(in, "stores " + type_str(value) + ", got " + type_str(operand(k, in, 1)));
      if (in.operands.size() > mask_at) {
        const Type& m = operand(k, in, mask_at);
        if (m.elem != Elem::I1 || m.shape != off.shape) fail(in, "the mask must be i1 of the offsets' shape");
      }
      if (load && in.operands.size() > 2 && !(operand(k, in, 2) == value))
        fail(in, "`other` must be " + type_str(value));
      return value;
    }
    case KShape::BlockLoad: {
      if (in.index < 0 || static_cast<size_t>(in.index) >= k.params.size())
        fail(in, "no param #" + std::to_string(in.index));
      for (size_t i = 0; i < in.operands.size(); ++i)
        if (!(operand(k, in, i) == Type{Elem::I64, {}})) fail(in, "base, rows, columns, bounds and stride are i64 scalars");
      const Type& t = declared(k, in);
      if (t.shape.size() != 2 || t.elem != k.params[static_cast<size_t>(in.index)].elem)
        fail(in, "gives a 2-D tile of the param's element type, not " + type_str(t));
      return t;
    }
    case KShape::Reduce: {
      Type t = operand(k, in, 0);
      if (!t.is_tile() || in.index < 0 || static_cast<size_t>(in.index) >= t.shape.size())
        fail(in, "folds an axis of a tile");
      if (t.elem == Elem::I1) fail(in, "not defined on i1");
      t.shape.erase(t.shape.begin() + in.index);
      if (in.reduce == ReduceKind::ArgMax) t.elem = Elem::I64;
      // A float sum may be declared f64: the sum in double, not rounded.
      if (in.reduce == ReduceKind::Sum && t.elem == Elem::F32 && in.results.size() == 1 &&
          in.results[0] < k.num_values() && k.value(in.results[0]).type.elem == Elem::F64)
        t.elem = Elem::F64;
      return t;
    }
    case KShape::Dot: {
      const Type& a = operand(k, in, 0);
      const Type& b = operand(k, in, 1);
      const Type& c = operand(k, in, 2);
      need_float(a);
      if (a.shape.size() != 2 || b.shape.size() != 2 || c.shape.size() != 2 || a.shape[1] != b.shape[0] ||
          c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1] || a.elem != b.elem || !elem_is_float(c.elem))
        fail(in, "multiplies tile<MxK> by tile<KxN> into tile<MxN>, got " + type_str(a) + ", " + type_str(b) +
                     ", " + type_str(c));
      return c;
    }
    case KShape::For:
    case KShape::Yield: fail(in, "has no single result");
  }
  fail(in, "unknown operation");
}

namespace {

class Verifier {
 public:
  explicit Verifier(const Kernel& k) : k_(k) {}

  std::vector<std::string> run() {
    check_header();
    block(k_.body, false);
    return errors_;
  }

 private:
  void error(const std::string& what) { errors_.push_back(what); }

  void check_header() {
    if (!k_.dim_values.empty() && k_.dim_values.size() != k_.dims.size())
      error("kernel: dim values for some dims only");
    if (k_.grid.empty() || k_.grid.size() > static_cast<size_t>(kMaxGridAxes)) error("kernel: the grid has 1 to 3 axes");
    auto dim_ok = [&](int d) { return d >= 0 && static_cast<size_t>(d) < k_.dims.size(); };
    for (const Extent& e : k_.grid) {
      for (int d : e.dims)
        if (!dim_ok(d)) error("kernel: grid names no dim #" + std::to_string(d));
      if (e.factor < 1 || e.div < 1) error("kernel: grid factors are positive");
    }
    for (const Param& p : k_.params)
      for (const DimRef& d : p.shape)
        if (d.dim >= 0 ? !dim_ok(d.dim) : d.value < 0) error("kernel: %" + p.name + " has a bad dim");
  }

  void define(ValueId v, const std::string& where) {
    if (v >= k_.num_values()) return error(where + ": defines no value");
    if (!defined_.insert(v).second) error(where + ": %" + name(v) + " is defined twice");
  }

  std::string name(ValueId v) const {
    return v < k_.num_values() && !k_.value(v).name.empty() ? k_.value(v).name : std::to_string(v);
  }

  void block(const Block& b, bool loop_body) {
    for (ValueId a : b.args) define(a, "block");
    for (size_t i = 0; i < b.insts.size(); ++i) {
      const Inst& in = b.insts[i];
      const std::string where = "instruction " + std::to_string(++count_) + " (" + op_info(in.op).name + ")";
      for (ValueId v : in.operands)
        if (!defined_.count(v)) error(where + ": %" + name(v) + " is used before it is defined");
      const bool last = i + 1 == b.insts.size();
      if (in.op == KOp::Yield) {
        if (!loop_body || !last) error(where + ": yield ends a loop body, and only that");
        continue;
      }
      if (in.op == KOp::For) {
        for_loop(in, where);
        continue;
      }
      try {
        Type t = infer_result(k_, in);
        if (in.op == KOp::Store) {
          if (!in.results.empty()) error(where + ": a store gives no value");
        } else if (in.results.size() != 1) {
          error(where + ": needs one result");
        } else if (!(k_.value(in.results[0]).type == t)) {
          error(where + ": result is " + type_str(k_.value(in.results[0]).type) + ", the operands give " + type_str(t));
        }
      } catch (const std::invalid_argument& e) {
        error(where + ": " + e.what());
      }
      for (ValueId r : in.results) define(r, where);
    }
    if (loop_body && (b.insts.empty() || b.insts.back().op != KOp::Yield)) error("a loop body must end with yield");
  }

  void for_loop(const Inst& in, const std::string& where) {
    const size_t n_iter = in.operands.size() >= 3 ? in.operands.size() - 3 : 0;
    const Type index{Elem::I64, {}};
    for (size_t i = 0; i < 3 && i < in.operands.size(); ++i)
      if (in.operands[i] < k_.num_values() && !(k_.value(in.operands[i]).type == index))
        error(where + ": bounds and step are i64 scalars");
    if (!in.body) return error(where + ": has no body");
    const Block& b = *in.body;
    if (b.args.size() != n_iter + 1 || in.results.size() != n_iter)
      return error(where + ": one body arg and one result per iter value, after the induction variable");
    auto ty = [&](ValueId v) { return v < k_.num_values() ? k_.value(v).type : Type{}; };
    if (!(ty(b.args[0]) == index)) error(where + ": the induction variable is i64");
    for (size_t i = 0; i < n_iter; ++i)
      if (!(ty(b.args[i + 1]) == ty(in.operands[3 + i])) || !(ty(in.results[i]) == ty(in.operands[3 + i])))
        error(where + ": iter value " + std::to_string(i) + " changes type");
    block(b, true);
    if (!b.insts.empty() && b.insts.back().op == KOp::Yield) {
      const Inst& y = b.insts.back();
      if (y.operands.size() != n_iter) error(where + ": yield gives one value per iter value");
      else
        for (size_t i = 0; i < n_iter; ++i)
          if (!(ty(y.operands[i]) == ty(in.operands[3 + i]))) error(where + ": yield value " + std::to_string(i) + " changes type");
    }
    // Values of the body are not visible after the loop.
    forget(b);
    for (ValueId r : in.results) define(r, where);
  }

  void forget(const Block& b) {
    for (ValueId a : b.args) defined_.erase(a);
    for (const Inst& in : b.insts) {
      for (ValueId r : in.results) defined_.erase(r);
      if (in.body) forget(*in.body);
    }
  }

  const Kernel& k_;
  std::unordered_set<ValueId> defined_;
  std::vector<std::string> errors_;
  size_t count_ = 0;
};

}  // namespace

std::vector<std::string> verify(const Kernel& k) { return Verifier(k).run(); }

}  // namespace tessera::kir
