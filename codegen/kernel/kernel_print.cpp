// The kernel IR's text form: the printer (kernel_text.h).
#include <charconv>
#include <cmath>

#include "codegen/kernel/kernel_text.h"

namespace tessera::kir {

namespace {

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  std::string run() {
    out_ = "kernel @" + k_.name + "\n";
    if (!k_.dims.empty()) {
      out_ += "  dims ";
      for (size_t i = 0; i < k_.dims.size(); ++i) {
        if (i) out_ += ", ";
        out_ += k_.dims[i];
        if (i < k_.dim_values.size() && k_.dim_values[i]) out_ += "=" + std::to_string(*k_.dim_values[i]);
      }
      out_ += "\n";
    }
    for (const Param& p : k_.params) {
      out_ += std::string(p.output ? "  out %" : "  in %") + p.name + " : " + elem_name(p.elem) + "[";
      for (size_t i = 0; i < p.shape.size(); ++i) {
        if (i) out_ += ", ";
        out_ += p.shape[i].dim >= 0 ? dim_name(p.shape[i].dim) : std::to_string(p.shape[i].value);
      }
      out_ += "]\n";
    }
    out_ += "  grid [";
    for (size_t i = 0; i < k_.grid.size(); ++i) out_ += (i ? ", " : "") + extent(k_.grid[i]);
    out_ += "]\n{\n";
    block(k_.body, 1);
    out_ += "}\n";
    return out_;
  }

 private:
  std::string dim_name(int d) const { return d >= 0 && static_cast<size_t>(d) < k_.dims.size() ? k_.dims[d] : "?"; }

  std::string extent(const Extent& e) const {
    std::string s;
    if (e.factor != 1 || e.dims.empty()) s = std::to_string(e.factor);
    for (int d : e.dims) s += (s.empty() ? "" : "*") + dim_name(d);
    return e.div == 1 ? s : "cdiv(" + s + ", " + std::to_string(e.div) + ")";
  }

  std::string v(ValueId id) const {
    return "%" + (id < k_.num_values() && !k_.value(id).name.empty() ? k_.value(id).name : std::to_string(id));
  }

  std::string list(const std::vector<ValueId>& ids, size_t from = 0, size_t to = SIZE_MAX) const {
    std::string s;
    for (size_t i = from; i < ids.size() && i < to; ++i) s += (i > from ? ", " : "") + v(ids[i]);
    return s;
  }

  std::string param(int i) const {
    return "%" + (i >= 0 && static_cast<size_t>(i) < k_.params.size() ? k_.params[i].name : std::string("?"));
  }

  static std::string number(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest text that reads back exactly
    return std::string(buf, r.ptr);
  }

  void block(const Block& b, int depth) {
    const std::string indent(2 * depth, ' ');
    for (const Inst& in : b.insts) {
      out_ += indent;
      const KOpInfo& info = op_info(in.op);
      if (in.op == KOp::For) {
        if (!in.results.empty()) out_ += list(in.results) + " = ";
        out_ += "for " + v(in.body->args[0]) + " = " + v(in.operands[0]) + " to " + v(in.operands[1]) + " step " +
                v(in.operands[2]);
        if (in.operands.size() > 3) {
          out_ += " iter(";
          for (size_t i = 3; i < in.operands.size(); ++i)
            out_ += (i > 3 ? ", " : "") + v(in.body->args[i - 2]) + " = " + v(in.operands[i]);
          out_ += ")";
        }
        out_ += " {\n";
        block(*in.body, depth + 1);
        out_ += indent + "}\n";
        continue;
      }
      if (!in.results.empty()) out_ += v(in.results[0]) + " = ";
      out_ += info.name;
      switch (info.shape) {
        case KShape::Const: {
          const Type& t = k_.value(in.results[0]).type;
          out_ += " " + (elem_is_float(t.elem) ? number(in.fvalue) : std::to_string(in.ivalue));
          break;
        }
        case KShape::Dim: out_ += " " + dim_name(in.index); break;
        case KShape::ProgramId: out_ += " " + std::to_string(in.index); break;
        case KShape::Cmp: out_ += std::string(".") + pred_name(in.pred) + " " + list(in.operands); break;
        case KShape::Broadcast:
        case KShape::Reduce:
          if (info.shape == KShape::Reduce) out_ += std::string(".") + reduce_name(in.reduce);
          out_ += " " + list(in.operands) + ", axis " + std::to_string(in.index);
          break;
        case KShape::Load:
          out_ += " " + param(in.index) + "[" + v(in.operands[0]) + "]";
          if (in.operands.size() > 1) out_ += ", mask " + v(in.operands[1]);
          if (in.operands.size() > 2) out_ += ", other " + v(in.operands[2]);
          break;
        case KShape::BlockLoad:
          if (in.transposed) out_ += ".t";
          out_ += " " + param(in.index) + "[" + list(in.operands) + "]";
          break;
        case KShape::Store:
          out_ += " " + param(in.index) + "[" + v(in.operands[0]) + "], " + v(in.operands[1]);
          if (in.operands.size() > 2) out_ += ", mask " + v(in.operands[2]);
          break;
        default:
          if (!in.operands.empty()) out_ += " " + list(in.operands);
          break;
      }
      if (!in.results.empty()) out_ += " : " + type_str(k_.value(in.results[0]).type);
      out_ += "\n";
    }
  }

  const Kernel& k_;
  std::string out_;
};

}  // namespace

std::string print(const Kernel& k) { return Printer(k).run(); }

}  // namespace tessera::kir
