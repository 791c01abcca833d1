// The text form of regions: Region::str and parse_region (region.h).
#include <charconv>
#include <cstdlib>
#include <stdexcept>

#include "vm/graph/region.h"

namespace tessera {

namespace {

// The shortest digits that read back to d.
std::string fmt_double(double d) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

}  // namespace

std::string region_type_str(const RegionType& t) {
  if (!t.tensor && !t.shape) return t.scalar == ScalarKind::Float ? "float" : t.scalar == ScalarKind::Int ? "int" : "bool";
  std::string s = std::string(t.shape ? "shape" : dtype_name(t.dtype)) + "[";
  for (size_t i = 0; i < t.dims.size(); ++i)
    s += (i ? ", " : "") + (t.dims[i] == kDimOne     ? std::string("1")
                            : t.dims[i] == kDimInfer ? std::string("-1")
                                                     : "s" + std::to_string(t.dims[i]));
  return s + "]";
}

namespace {

bool has_dtype_attr(const OpDef& def) {
  for (const AttrDef& a : def.attrs)
    if (std::string_view(a.name) == "dtype") return true;
  return false;
}

}  // namespace

std::string Region::str() const {
  std::string s;
  for (int v = 0; v < num_values(); ++v) {
    if (is_input(v)) {
      s += "%" + std::to_string(v) + " = input : " + region_type_str(type(v)) + "\n";
      continue;
    }
    const RegionOp& o = op_of(v);
    std::vector<std::string> parts;  // arguments, then attributes
    size_t next = 0;
    if (!o.args.empty()) parts.push_back("%" + std::to_string(o.args[next++]));
    if (o.attrs.weight) parts.push_back("weight=%" + std::to_string(o.args.at(next++)));
    if (o.attrs.bias) parts.push_back("bias=%" + std::to_string(o.args.at(next++)));
    for (; next < o.args.size(); ++next) parts.push_back("%" + std::to_string(o.args[next]));
    const FusionKind fk = op_def(o.op).fusion.kind;
    if (has_dtype_attr(op_def(o.op)) && !o.attrs.infer_dtype) parts.push_back(dtype_name(o.attrs.cast_to));
    for (size_t k = 0; k < o.attrs.axes.size(); ++k) parts.push_back("dim" + std::to_string(k) + "=" + std::to_string(o.attrs.axes[k]));
    if (o.attrs.step) parts.push_back("step");
    if (o.attrs.axis) parts.push_back("axis=" + std::to_string(*o.attrs.axis));
    if (o.attrs.keepdim) parts.push_back("keepdim");
    if (o.attrs.causal) parts.push_back("causal");
    if (o.attrs.scale) parts.push_back("scale=" + fmt_double(*o.attrs.scale));
    if (fk == FusionKind::LayerNorm || fk == FusionKind::RmsNorm) parts.push_back("eps=" + fmt_double(o.attrs.eps));
    s += "%" + std::to_string(v) + " = " + op_def(o.op).name + "(";
    for (size_t k = 0; k < parts.size(); ++k) s += (k ? ", " : "") + parts[k];
    s += ") : " + region_type_str(o.type) + "\n";
  }
  s += "outputs";
  for (int v : outputs) s += " %" + std::to_string(v);
  return s + "\n";
}

namespace {

std::string_view trim(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

std::optional<DType> dtype_by_name(std::string_view n) {
  for (int d = 0; d < kNumDTypes; ++d)
    if (n == dtype_name(static_cast<DType>(d))) return static_cast<DType>(d);
  return std::nullopt;
}

// "f32[s0, 1]" or "float" / "int" / "bool"; symbols seen raise num_symbols.
std::optional<RegionType> parse_type(std::string_view t, int& num_symbols) {
  t = trim(t);
  RegionType out;
  if (t == "float" || t == "int" || t == "bool") {
    out.tensor = false;
    out.scalar = t == "float" ? ScalarKind::Float : t == "int" ? ScalarKind::Int : ScalarKind::Bool;
    return out;
  }
  const size_t open = t.find('[');
  if (open == std::string_view::npos || t.back() != ']') return std::nullopt;
  if (t.substr(0, open) == "shape") {
    out.tensor = false;
    out.shape = true;
  } else if (const auto dt = dtype_by_name(t.substr(0, open))) {
    out.dtype = *dt;
  } else {
    return std::nullopt;
  }
  std::string_view dims = t.substr(open + 1, t.size() - open - 2);
  while (!dims.empty()) {
    const size_t comma = dims.find(',');
    const std::string_view d = trim(dims.substr(0, comma));
    if (d == "1") {
      out.dims.push_back(kDimOne);
    } else if (d == "-1" && out.shape) {
      out.dims.push_back(kDimInfer);
    } else if (d.size() > 1 && d[0] == 's') {
      int sym = 0;
      for (char c : d.substr(1)) {
        if (c < '0' || c > '9') return std::nullopt;
        sym = sym * 10 + (c - '0');
        if (sym > 1000) return std::nullopt;
      }
      out.dims.push_back(sym);
      num_symbols = std::max(num_symbols, sym + 1);
    } else {
      return std::nullopt;
    }
    dims = comma == std::string_view::npos ? std::string_view{} : dims.substr(comma + 1);
  }
  return out;
}

std::optional<int64_t> parse_int(std::string_view v) {
  const std::string t(trim(v));
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const long long n = std::strtoll(t.c_str(), &end, 10);
  if (*end != '\0' || n < -1000 || n > 1000) return std::nullopt;
  return n;
}

std::optional<double> parse_double(std::string_view v) {
  const std::string t(trim(v));
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return d;
}

// "%12" -> 12
std::optional<int> parse_value(std::string_view v) {
  v = trim(v);
  if (v.size() < 2 || v[0] != '%') return std::nullopt;
  int n = 0;
  for (char c : v.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
    if (n > 1000000) return std::nullopt;
  }
  return n;
}

}  // namespace

Region parse_region(std::string_view text, bool types_only) {
  Region r;
  r.types_only = types_only;
  size_t line_no = 0;
  auto fail = [&](const std::string& what) -> Region {
    throw std::invalid_argument("region line " + std::to_string(line_no) + ": " + what);
  };
  // Inputs are typed in one pass, so symbols must be known before: count them first.
  int symbols = 0;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(at, nl - at);
    if (size_t c = line.rfind(" : "); c != std::string_view::npos) parse_type(line.substr(c + 3), symbols);
    at = nl + 1;
  }
  r.num_symbols = symbols;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = trim(text.substr(at, nl - at));
    at = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line.starts_with("outputs")) {
      std::string_view rest = trim(line.substr(7));
      while (!rest.empty()) {
        const size_t sp = rest.find(' ');
        const auto v = parse_value(rest.substr(0, sp));
        if (!v || *v >= r.num_values()) return fail("bad output");
        r.outputs.push_back(*v);
        rest = sp == std::string_view::npos ? std::string_view{} : trim(rest.substr(sp));
      }
      continue;
    }
    const size_t eq = line.find(" = "), colon = line.rfind(" : ");
    if (eq == std::string_view::npos || colon == std::string_view::npos || colon < eq) return fail("expected '%N = ... : TYPE'");
    const auto num = parse_value(line.substr(0, eq));
    if (!num || *num != r.num_values()) return fail("values must be numbered in order");
    int ignored = 0;
    const auto type = parse_type(line.substr(colon + 3), ignored);
    if (!type) return fail("bad type");
    const std::string_view body = trim(line.substr(eq + 3, colon - eq - 3));
    if (body == "input") {
      if (type->tensor) r.add_tensor_input(type->dtype, type->dims);
      else if (type->shape) r.add_shape_input(type->dims);
      else r.add_scalar_input(type->scalar);
      continue;
    }
    const size_t open = body.find('(');
    if (open == std::string_view::npos || body.back() != ')') return fail("expected NAME(args)");
    const OpDef* def = find_op(body.substr(0, open));
    if (def == nullptr) return fail("unknown operation " + std::string(body.substr(0, open)));
    std::vector<int> args;
    RegionAttrs attrs;
    attrs.infer_dtype = def->id != OpId::Cast && has_dtype_attr(*def);  // unless the text names one
    std::string_view list = body.substr(open + 1, body.size() - open - 2);
    while (!list.empty()) {
      const size_t comma = list.find(',');
      const std::string_view item = trim(list.substr(0, comma));
      const size_t eqs = item.find('=');
      const std::string_view key = eqs == std::string_view::npos ? item : item.substr(0, eqs);
      const std::string_view val = eqs == std::string_view::npos ? std::string_view{} : item.substr(eqs + 1);
      if (auto v = parse_value(item)) args.push_back(*v);
      else if (auto d = dtype_by_name(item); d && has_dtype_attr(*def)) {
        attrs.cast_to = *d;
        attrs.infer_dtype = false;
      } else if (key == "step" && val.empty()) attrs.step = true;
      else if (key == "keepdim" && val.empty()) attrs.keepdim = true;
      else if (key == "causal" && val.empty()) attrs.causal = true;
      else if (key == "scale" && parse_double(val)) attrs.scale = *parse_double(val);
      else if (key == "axis" && parse_int(val)) attrs.axis = static_cast<int>(*parse_int(val));
      else if (key == ("dim" + std::to_string(attrs.axes.size())) && parse_int(val))
        attrs.axes.push_back(static_cast<int>(*parse_int(val)));
      else if (key == "eps" && parse_double(val)) attrs.eps = *parse_double(val);
      else if ((key == "weight" || key == "bias") && parse_value(val)) {
        (key == "weight" ? attrs.weight : attrs.bias) = true;
        args.push_back(*parse_value(val));
      } else return fail("bad argument " + std::string(item));
      list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    std::optional<int> v;
    const int named = r.num_symbols;  // every symbol the text names
    const size_t sizes = r.symbol_sizes.size();
    try {
      v = r.add(def->id, args, attrs);
    } catch (const std::invalid_argument& e) {
      return fail(e.what());
    }
    if (!v) return fail(std::string(def->name) + (types_only ? " is not typed" : " does not fuse") + " with these operands");
    // A result dim no operand gives is a new symbol: it takes the text's name.
    if (r.num_symbols > named && type->tensor && type->dims.size() == r.type(*v).dims.size()) {
      const std::vector<int> made = r.type(*v).dims;
      for (size_t k = 0; k < made.size(); ++k)
        if (made[k] >= named && type->dims[k] >= 0) r.replace_symbol(made[k], type->dims[k]);
      r.num_symbols = named;
      r.symbol_sizes.resize(sizes, -1);
    }
    if (!(r.type(*v) == *type)) return fail("the operands give " + region_type_str(r.type(*v)));
  }
  return r;
}

}  // namespace tessera
