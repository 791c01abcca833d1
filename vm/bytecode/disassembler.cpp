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


// ---------------------------------------------------------------- instructions

// Each operand prints by its role (opcodes.def); unused fields not at all.
std::string instruction_line(const Module* m, const FunctionProto& fn, uint32_t pc) {
  const Instr& in = fn.code[pc];
  const OpInfo& info = op_info(in.op);

  std::string operands, comment;
  auto add_comment = [&comment](const std::string& s) {
    comment += comment.empty() ? s : ", " + s;
  };
  for (int i = 0; i < kNumOperands; ++i) {
    const OperandRole role = info.roles[i];
    const int64_t v = operand_value(in, i);
    std::string text;
    switch (role) {
      case OperandRole::none: continue;
      case OperandRole::dst:
      case OperandRole::src:
      case OperandRole::src4:
      case OperandRole::srcN:
      case OperandRole::src1N:
      case OperandRole::srcUp: text = "r" + std::to_string(v); break;
      case OperandRole::count:
      case OperandRole::imm: text = std::to_string(v); break;
      case OperandRole::target: text = "-> " + std::to_string(static_cast<int64_t>(pc) + 1 + v); break;
      case OperandRole::konst:
        text = "k" + std::to_string(v);
        add_comment(static_cast<size_t>(v) < fn.consts.size() ? constant_repr(fn.consts[v])
                                                               : "<bad constant>");
        break;
      case OperandRole::global:
        text = "g" + std::to_string(v);
        if (m) add_comment(static_cast<size_t>(v) < m->global_names.size() ? m->global_names[v] : "<bad global>");
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
    case Module::GlobalInit::Kept: return "kept";
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

std::string disassemble_instruction(const FunctionProto& fn, uint32_t pc) {
  if (pc >= fn.code.size()) return {};
  std::string line = instruction_line(nullptr, fn, pc);
  line.erase(0, line.find_first_not_of(' '));
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

std::string disassemble_function(const Module& m, const FunctionProto& fn) {
  std::string params;
  for (int i = 0; i < fn.nparams; ++i) params += (i ? ", " : "") + param_name(fn, i);
  std::string out = "fn " + fn.name + "(" + params + ")  params=" + std::to_string(fn.nparams) +
                    " regs=" + std::to_string(fn.nregs) +
                    " consts=" + std::to_string(fn.consts.size()) + "  ; " + m.filename + ":" +
                    std::to_string(fn.line) + "\n";
  for (uint32_t pc = 0; pc < fn.code.size(); ++pc) out += instruction_line(&m, fn, pc);
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
