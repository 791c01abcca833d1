#include "vm/bytecode/disassembler.h"

#include "vm/core/string_escape.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace tessera {

namespace {

// ---------------------------------------------------------------- constants

// Python's repr(float): shortest round-trip digits, fixed notation when
// 1e-4 <= |x| < 1e16, else d.ddde±XX.
std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  std::string out;
  if (sci.front() == '-') {
    out = "-";
    sci.remove_prefix(1);
  }
  size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos))
    if (c != '.') digits.push_back(c);
  int exp = 0;
  std::string_view exp_text = sci.substr(e_pos + 1);
  if (exp_text.front() == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);

  double mag = std::fabs(x);
  if (mag == 0.0 || (mag >= 1e-4 && mag < 1e16)) {
    if (exp >= 0) {
      size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
      std::string frac = digits.substr(int_len);
      out += digits.substr(0, int_len) + "." + (frac.empty() ? "0" : frac);
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return out + ebuf;
}


// ---------------------------------------------------------------- operand shapes

// What an instruction field means, for printing.
enum class Role : uint8_t {
  None,  // unused field
  Reg,   // r3
  Const, // k3 (+ value comment)
  Glob,  // g3 (+ name comment)
  Num,   // a count
  Imm,   // a signed immediate
  Jump,  // absolute target
};

struct Shape {
  Role a, b, c;
};

// Default meaning of the fields of each format; for sBx the single field
// is printed from `a`'s position.
Shape format_shape(OpFormat f) {
  constexpr Shape kByFormat[] = {
      /* ABC  */ {Role::Reg, Role::Reg, Role::Reg},
      /* AB   */ {Role::Reg, Role::Reg, Role::None},
      /* A    */ {Role::Reg, Role::None, Role::None},
      /* ABx  */ {Role::Reg, Role::Const, Role::None},
      /* AsBx */ {Role::Reg, Role::Jump, Role::None},
      /* sBx  */ {Role::Jump, Role::None, Role::None},
      /* BR   */ {Role::Reg, Role::Reg, Role::None},
  };
  return kByFormat[static_cast<int>(f)];
}

// Opcodes whose fields mean something other than their format's default.
struct ShapeOverride {
  Op op;
  Shape shape;
};
constexpr Role R = Role::Reg, K = Role::Const, G = Role::Glob, N = Role::Num, I = Role::Imm,
               X = Role::None;
constexpr ShapeOverride kOverrides[] = {
    {Op::LOADI, {R, I, X}},      {Op::GETGLOBAL, {R, G, X}}, {Op::SETGLOBAL, {R, G, X}},
    {Op::DEFGLOBAL, {R, G, X}},  {Op::ADDK, {R, R, K}},      {Op::SUBK, {R, R, K}},
    {Op::MULK, {R, R, K}},       {Op::DIVK, {R, R, K}},      {Op::IDIVK, {R, R, K}},
    {Op::MODK, {R, R, K}},       {Op::POWK, {R, R, K}},      {Op::JEQK, {R, K, X}},
    {Op::JNEK, {R, K, X}},       {Op::JLTK, {R, K, X}},      {Op::JLEK, {R, K, X}},
    {Op::JGTK, {R, K, X}},       {Op::JGEK, {R, K, X}},      {Op::LOOP, {X, X, X}},
    {Op::RETNIL, {X, X, X}},     {Op::CALL, {R, N, X}},      {Op::CALLKW, {R, N, K}},
    {Op::NEWLIST, {R, R, N}},    {Op::LISTEXT, {R, R, N}},   {Op::GETINDEXN, {R, R, N}},
    {Op::SETINDEXN, {R, R, N}},
};

Shape shape_of(Op op) {
  for (const auto& o : kOverrides)
    if (o.op == op) return o.shape;
  return format_shape(op_info(op).format);
}

// The raw value of each printed field, by format.
void fields_of(const Instr& in, OpFormat f, int64_t out[3]) {
  switch (f) {
    case OpFormat::ABC: out[0] = in.a; out[1] = in.b; out[2] = in.c; return;
    case OpFormat::AB:
    case OpFormat::BR: out[0] = in.a; out[1] = in.b; out[2] = 0; return;
    case OpFormat::A: out[0] = in.a; out[1] = out[2] = 0; return;
    case OpFormat::ABx: out[0] = in.a; out[1] = in.bx; out[2] = 0; return;
    case OpFormat::AsBx: out[0] = in.a; out[1] = in.sbx; out[2] = 0; return;
    case OpFormat::sBx: out[0] = in.sbx; out[1] = out[2] = 0; return;
  }
}

std::string instruction_line(const Module& m, const FunctionProto& fn, uint32_t pc) {
  const Instr& in = fn.code[pc];
  const OpInfo& info = op_info(in.op);
  Shape shape = shape_of(in.op);
  int64_t f[3];
  fields_of(in, info.format, f);

  std::string operands, comment;
  auto add_comment = [&comment](const std::string& s) {
    comment += comment.empty() ? s : ", " + s;
  };
  const Role roles[3] = {shape.a, shape.b, shape.c};
  for (int i = 0; i < 3; ++i) {
    std::string text;
    switch (roles[i]) {
      case Role::None: continue;
      case Role::Reg: text = "r" + std::to_string(f[i]); break;
      case Role::Num:
      case Role::Imm: text = std::to_string(f[i]); break;
      case Role::Jump: text = "-> " + std::to_string(static_cast<int64_t>(pc) + 1 + f[i]); break;
      case Role::Const:
        text = "k" + std::to_string(f[i]);
        add_comment(static_cast<size_t>(f[i]) < fn.consts.size() ? constant_repr(fn.consts[f[i]])
                                                                  : "<bad constant>");
        break;
      case Role::Glob:
        text = "g" + std::to_string(f[i]);
        add_comment(static_cast<size_t>(f[i]) < m.global_names.size() ? m.global_names[f[i]]
                                                                      : "<bad global>");
        break;
    }
    if (!operands.empty()) operands += ' ';
    operands += text;
  }
  if (const std::string* callee = fn.call_name_at(pc)) add_comment(*callee);
  if (in.flags & kFlagConstLeft) add_comment("constant on the left");

  int line = pc < fn.lines.size() ? fn.lines[pc] : 0;
  char head[64];
  std::snprintf(head, sizeof head, "  %5u %5d  %-10s ", pc, line, info.name);
  std::string out = head + operands;
  if (!comment.empty()) {
    if (operands.size() < 18) out.append(18 - operands.size(), ' ');
    out += " ; " + comment;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

std::string param_name(const FunctionProto& fn, int i) {
  for (const auto& l : fn.locals)
    if (l.reg == i && l.start_pc == 0) return l.name;
  return "a" + std::to_string(i);
}

const char* init_name(Module::GlobalInit init) {
  switch (init) {
    case Module::GlobalInit::Function: return "fn";
    case Module::GlobalInit::Builtin: return "builtin";
    case Module::GlobalInit::Undefined: return "";
  }
  return "";
}

}  // namespace

std::string constant_repr(const Value& v) {
  switch (v.tag()) {
    case Tag::Int: return std::to_string(v.as_int());
    case Tag::Float: return float_repr(v.as_float());
    case Tag::Str: {
      std::string out;
      append_quoted(out, v.as_str()->view());
      return out;
    }
    case Tag::List: {
      std::string out = "[";
      for (const auto& item : v.as_list()->items) {
        if (out.size() > 1) out += ", ";
        out += constant_repr(item);
      }
      return out + "]";
    }
    case Tag::Nil: return "nil";
    case Tag::Bool: return v.as_bool() ? "true" : "false";
    default: return std::string("<") + type_name(v) + ">";
  }
}

std::string disassemble_function(const Module& m, const FunctionProto& fn) {
  std::string params;
  for (int i = 0; i < fn.nparams; ++i) params += (i ? ", " : "") + param_name(fn, i);
  std::string out = "fn " + fn.name + "(" + params + ")  params=" + std::to_string(fn.nparams) +
                    " regs=" + std::to_string(fn.nregs) +
                    " consts=" + std::to_string(fn.consts.size()) + "  ; " + m.filename + ":" +
                    std::to_string(fn.line) + "\n";
  for (uint32_t pc = 0; pc < fn.code.size(); ++pc) out += instruction_line(m, fn, pc);
  if (!fn.consts.empty()) {
    out += "  constants:\n";
    for (size_t k = 0; k < fn.consts.size(); ++k)
      out += "    k" + std::to_string(k) + "  " + constant_repr(fn.consts[k]) + "\n";
  }
  if (!fn.locals.empty()) {
    out += "  locals:\n";
    for (const auto& l : fn.locals)
      out += "    r" + std::to_string(l.reg) + "  " + l.name + "  pc " +
             std::to_string(l.start_pc) + ".." + std::to_string(l.end_pc) + "\n";
  }
  return out;
}

std::string disassemble(const Module& m) {
  std::string out;
  if (!m.global_names.empty()) {
    out += "globals:\n";
    for (size_t g = 0; g < m.global_names.size(); ++g) {
      std::string line = "  g" + std::to_string(g) + "  " + m.global_names[g] + "  " +
                         init_name(m.global_slots[g].init);
      while (line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    out += "\n";
  }
  for (size_t i = 0; i < m.functions.size(); ++i) {
    if (i) out += "\n";
    out += disassemble_function(m, *m.functions[i]);
  }
  return out;
}

}  // namespace tessera
