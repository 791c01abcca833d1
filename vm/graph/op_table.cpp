#include "vm/graph/op_table.h"

#include <iterator>

#include "vm/core/error.h"
#include "vm/graph/op_impl.h"

namespace tessera {

namespace {

using namespace opimpl;

// One attribute array per op, each ending in an empty sentinel entry so that
// ops without attributes still get a (zero-length) array.
#define TESSERA_ATTR(n, type, d) AttrDef{n, AttrType::type, d},
#define TESSERA_OP(id, name, disp, bi, mn, mx, sh, dt, sc, k, fus, ...) \
  constexpr AttrDef kAttrs_##id[] = {__VA_ARGS__ AttrDef{}};
#include "vm/graph/ops.def"
#undef TESSERA_OP

constexpr OpDef kOps[] = {
#define TESSERA_OP(id, name, disp, bi, mn, mx, sh, dt, sc, k, fus, ...)                                 \
  OpDef{OpId::id, name, disp, bi, mn, mx,                                                              \
        std::span<const AttrDef>(kAttrs_##id, std::size(kAttrs_##id) - 1), sh, dt, sc, k, fus},
#include "vm/graph/ops.def"
#undef TESSERA_OP
};
#undef TESSERA_ATTR

// Rows are in OpId order (op_def indexes by id) and fit OpCall's attribute array.
constexpr bool table_is_consistent() {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (static_cast<size_t>(kOps[i].id) != i || kOps[i].attrs.size() > kMaxAttrs) return false;
  return true;
}
static_assert(table_is_consistent());
// Each elementwise operation's Graph IR op (graph_op) fuses as that operation.
constexpr bool elementwise_ops_map_back() {
  for (int i = 0; i < kNumUnary; ++i) {
    const FusionClass f = kOps[static_cast<size_t>(graph_op(static_cast<Unary>(i)))].fusion;
    if (f.kind != FusionKind::Unary || f.sub != i) return false;
  }
  for (int i = 0; i < kNumBinary; ++i) {
    const FusionClass f = kOps[static_cast<size_t>(graph_op(static_cast<Binary>(i)))].fusion;
    if (f.kind != FusionKind::Binary || f.sub != i) return false;
  }
  return true;
}
static_assert(elementwise_ops_map_back());

const char* attr_expectation(AttrType t) {
  switch (t) {
    case AttrType::Int: return "int";
    case AttrType::OptInt: return "int or nil";
    case AttrType::Number: return "a number";
    case AttrType::OptNumber: return "a number or nil";
    case AttrType::Bool: return "bool";
    case AttrType::DType: return "a dtype";
    case AttrType::OptDType: return "a dtype or nil";
    case AttrType::Str: return "str";
    case AttrType::OptTensor: return "a tensor or nil";
  }
  return "?";
}

bool attr_accepts(AttrType t, const Value& v) {
  switch (t) {
    case AttrType::Int: return v.is_int();
    case AttrType::OptInt: return v.is_int() || v.is_nil();
    case AttrType::Number: return v.is_number();
    case AttrType::OptNumber: return v.is_number() || v.is_nil();
    case AttrType::Bool: return v.is_bool();
    case AttrType::DType: return v.is_dtype();
    case AttrType::OptDType: return v.is_dtype() || v.is_nil();
    case AttrType::Str: return v.is_str();
    case AttrType::OptTensor: return v.is_tensor() || v.is_nil();
  }
  return false;
}

// "sum() takes 1 to 3 arguments (4 given)", the registry's wording.
[[noreturn]] void arity_error(const OpDef& d, size_t given) {
  size_t lo = static_cast<size_t>(d.min_inputs), hi = static_cast<size_t>(d.max_inputs) + d.attrs.size();
  std::string msg = std::string(d.name) + "() takes ";
  if (lo == hi) msg += std::to_string(lo) + (lo == 1 ? " argument" : " arguments");
  else msg += std::to_string(lo) + " to " + std::to_string(hi) + " arguments";
  throw RuntimeError(msg + " (" + std::to_string(given) + " given)");
}

}  // namespace

Value AttrDefault::to_value() const {
  switch (kind) {
    case Kind::Required:
    case Kind::Nil: return Value::nil();
    case Kind::Bool: return Value::boolean(i != 0);
    case Kind::Int: return Value::integer(i);
    case Kind::Number: return Value::number(f);
    case Kind::DType: return Value::dtype(dt);
    case Kind::Str: return make_str(s);
  }
  return Value::nil();
}

const Value& OpCall::attr(std::string_view n) const {
  for (size_t i = 0; i < def->attrs.size(); ++i)
    if (n == def->attrs[i].name) return attrs[i];
  // A kernel asking for an attribute its row lacks is a table bug.
  throw RuntimeError(std::string("internal error: op ") + def->name + " has no attribute " + std::string(n));
}

const TensorObj& OpCall::tensor(size_t i) const {
  const Value& v = inputs[i];
  if (!v.is_tensor()) throw RuntimeError(std::string(name()) + ": expected tensor, got " + type_name(v));
  return *v.as_tensor();
}

const char* OpCall::name() const { return def->display; }

std::span<const OpDef> op_table() { return kOps; }

const OpDef& op_def(OpId id) { return kOps[static_cast<size_t>(id)]; }

const OpDef* find_op(std::string_view name) {
  for (const OpDef& d : kOps)
    if (name == d.name) return &d;
  return nullptr;
}

OpCall bind_op(const OpDef& d, const CallArgs& a) {
  OpCall c;
  c.def = &d;
  const size_t npos = a.pos.size();
  const size_t nattrs = d.attrs.size();
  if (npos < static_cast<size_t>(d.min_inputs) || npos > static_cast<size_t>(d.max_inputs) + nattrs)
    arity_error(d, npos);
  // Positional arguments fill the inputs first, then attributes in order.
  const size_t nin = std::min(npos, static_cast<size_t>(d.max_inputs));
  c.inputs = a.pos.subspan(0, nin);
  std::array<bool, kMaxAttrs> given{};
  for (size_t i = nin; i < npos; ++i) {
    c.attrs[i - nin] = a.pos[i];
    given[i - nin] = true;
  }
  for (size_t k = 0; k < a.kw_count(); ++k) {
    std::string_view kw;
    if (a.kw_names && k < a.kw_names->size() && (*a.kw_names)[k].is_str()) kw = (*a.kw_names)[k].as_str()->view();
    size_t idx = nattrs;
    for (size_t j = 0; j < nattrs; ++j)
      if (kw == d.attrs[j].name) idx = j;
    if (idx == nattrs)
      throw RuntimeError(std::string(d.name) + ": unexpected keyword argument '" + std::string(kw) + "'");
    if (given[idx])
      throw RuntimeError(std::string(d.name) + ": got multiple values for argument '" + std::string(kw) + "'");
    c.attrs[idx] = a.kw_values[k];
    given[idx] = true;
  }
  for (size_t j = 0; j < nattrs; ++j) {
    const AttrDef& ad = d.attrs[j];
    if (!given[j]) {
      if (ad.dflt.kind == AttrDefault::Kind::Required)
        throw RuntimeError(std::string(d.name) + ": missing argument '" + ad.name + "'");
      c.attrs[j] = ad.dflt.to_value();
    } else if (!attr_accepts(ad.type, c.attrs[j])) {
      throw RuntimeError(std::string(d.name) + ": " + ad.name + " must be " + attr_expectation(ad.type) +
                         ", got " + type_name(c.attrs[j]));
    }
  }
  return c;
}

Value run_op(const OpCall& c) {
  const OpDef& d = *c.def;
  if (!d.shape) return d.kernel(c, nullptr);
  Shape shape = d.shape(c);
  DType dtype = d.dtype(c);
  Value out = make_tensor(dtype, std::move(shape), false);
  d.kernel(c, out.as_tensor());
  return out;
}

Value call_op(const OpDef& d, const CallArgs& a) {
  // Scalar fast path (e.g. sqrt(x) in a hot scalar loop): no binding work.
  if (d.scalar && a.kw_values.empty() && a.pos.size() == static_cast<size_t>(d.min_inputs)) {
    bool any_tensor = false;
    for (const Value& v : a.pos) any_tensor |= v.is_tensor();
    if (!any_tensor) return d.scalar(a.pos);
  }
  try {
    return run_op(bind_op(d, a));
  } catch (const std::bad_alloc&) {
    throw RuntimeError("out of memory");
  }
}

Value call_op(OpId id, std::span<const Value> inputs) {
  CallArgs a;
  a.pos = inputs;
  return call_op(op_def(id), a);
}

}  // namespace tessera
