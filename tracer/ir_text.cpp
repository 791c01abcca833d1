// Text form of trace IR (print_ir / parse_ir), modelled on LuaJIT's -jdump:
//
//   0000 >  int  SLOAD  0  #0
//   0001    int  KINT   1
//   0002    int  ADD    0000  0001
//   0003 >  flt  LLOAD  0004  0000 mixed  #1  (kMixedRow: a float of a mixed row)
//   SNAP #0 ir=0000 pc=3 frames=[] []
//   CALL #0 builtin 0 sqrt 0x0
//   CALL #1 indexget 0 index 0x0 dest=5     (object result owned by slot 5)
//   CALL #2 arith 2 arith* 0x0 dest=4 seen=0:f32:3  (argument 0 was an f32 [3] tensor)
//     | %0 = input : f32[s0]                (its Graph IR operation, typed when
//     | %1 = input : float                   recorded: a one-op region, dims
//     | %2 = mul(%0, %1) : f32[s0]           the trace's symbols; a kernel
//     | outputs                              call's region is written alike)
//   VTENSOR #0 f32 [2, 3]                   (a sunk tensor's dtype and shape)
//
// Everything a trace holds except runtime counters is in the text, so tests
// and optimizer passes can be written as IR in / IR out and dumps can be read
// back. Blank lines and `--` comments (at line start or after whitespace) are
// ignored by the parser.
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

#include "tracer/call_fields.h"
#include "tracer/ir_operands.h"
#include "tracer/trace_ir.h"
#include "vm/bytecode/bytecode.h"
#include "vm/graph/region.h"

namespace tessera::jit {

namespace {

// The canonical quiet NaN prints as plain `nan`; any other NaN (sign,
// payload) prints its bit pattern so that it reads back bit-exactly.
constexpr uint64_t kCanonicalNaN = 0x7ff8000000000000ull;

const char* const kCallKindNames[] = {"builtin",  "arith",     "compare", "indexget", "indexset",
                                      "builtinkw", "newlist", "negate", "listext", "kernel"};
constexpr int kNumCallKinds = CallTarget::kNumKinds;
static_assert(std::size(kCallKindNames) == kNumCallKinds, "a name per CallTarget::Kind");

// A missing operand (a CALL without arguments) is `none`, as ir.def says;
// `----` would read as a comment.
std::string fmt_ref(uint32_t r) {
  if (r == kNoRef) return "none";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04u", r);
  return buf;
}

std::string fmt_hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string fmt_float(uint64_t bits) {
  double d = std::bit_cast<double>(bits);
  if (std::isnan(d)) {
    if (bits == kCanonicalNaN) return "nan";
    char buf[32];
    std::snprintf(buf, sizeof buf, "nan:0x%016llx", static_cast<unsigned long long>(bits));
    return buf;
  }
  char buf[64];
  // Shortest representation that parses back to the same double.
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, res.ptr);
  // Keep floats visibly distinct from ints in dumps: `2.0`, not `2`.
  if (s.find_first_of(".ein") == std::string::npos) s += ".0";
  return s;
}

// Names in SNAP/CALL lines are single tokens: characters that would end or
// split a token are written %XX, an empty name is `-`, and a leading `-` is
// escaped so that neither `-` nor `--` (comment) can be mistaken for a name.
std::string escape_name(std::string_view name) {
  if (name.empty()) return "-";
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    bool special = c <= ' ' || c >= 0x7f || c == '%' || c == '@' || c == '/' || c == '[' ||
                   c == ']' || c == '#' || (c == '-' && i == 0);
    if (special) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string frame_name(const SnapshotFrame& f) { return f.proto ? f.proto->name : f.name; }

void rtrim(std::string& s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
}

std::string print_ins(const TraceIR& ir, IRRef r) {
  const IRIns& in = ir[r];
  const IROpInfo& info = ir_op_info(in.op);
  char head[64];
  std::snprintf(head, sizeof head, "%s %c  %-4s %-6s", fmt_ref(r).c_str(),
                ir_is_guard(in.op) ? '>' : ' ', ir_type_name(in.type), info.name);
  std::string line = head;

  auto pool = [&](uint32_t idx, auto&& fmt) -> std::string {
    // A corrupt index prints as a token the parser rejects, not a crash.
    return idx < ir.const_pool().size() ? fmt(ir.const_pool()[idx]) : "<bad-const>";
  };
  auto operand = [&](OperandKind kind, uint32_t v) -> std::string {
    switch (kind) {
      case OperandKind::ref: return fmt_ref(v);
      case OperandKind::lit:
        if (in.op == IROp::KBOOL) return v ? "true" : "false";
        return std::to_string(v);
      case OperandKind::cst:
        switch (in.op) {
          case IROp::KINT:
            return pool(v, [](uint64_t b) { return std::to_string(std::bit_cast<int64_t>(b)); });
          case IROp::KFLOAT: return pool(v, fmt_float);
          default: return pool(v, fmt_hex);
        }
      case OperandKind::none: break;
    }
    return {};
  };

  bool first = true;
  for (auto [kind, v] : {std::pair{info.op1, in.op1}, std::pair{info.op2, in.op2}}) {
    if (kind == OperandKind::none) continue;
    line += first ? " " : "  ";
    line += operand(kind, v);
    first = false;
  }
  if (ir.is_converted_int(r)) line += " int";  // TraceIR::kfloat's an_int
  if (in.op == IROp::LLOAD && (in.flags & kMixedRow)) line += " mixed";
  if (in.snap != kNoSnap) line += "  #" + std::to_string(in.snap);
  rtrim(line);
  if (in.op == IROp::KOBJ && in.op1 < ir.const_pool().size())
    if (const std::string* what = ir.const_description(ir.const_ptr(r)); what && !what->empty())
      line += "  -- " + *what;  // read back by the parser
  return line;
}

// ---- parsing

[[noreturn]] void fail(size_t line, const std::string& msg) {
  throw std::invalid_argument("line " + std::to_string(line) + ": " + msg);
}

template <typename T>
bool parse_num(std::string_view tok, T& out, int base = 10) {
  if (tok.empty()) return false;
  auto res = std::from_chars(tok.data(), tok.data() + tok.size(), out, base);
  return res.ec == std::errc() && res.ptr == tok.data() + tok.size();
}

bool parse_hex_u64(std::string_view tok, uint64_t& out) {
  if (tok.size() < 3 || tok[0] != '0' || (tok[1] != 'x' && tok[1] != 'X')) return false;
  return parse_num(tok.substr(2), out, 16);
}

bool parse_float_bits(std::string_view tok, uint64_t& bits) {
  if (tok == "nan") {
    bits = kCanonicalNaN;
    return true;
  }
  if (tok.starts_with("nan:")) {
    // Only NaN patterns: anything else has a canonical spelling of its own.
    return parse_hex_u64(tok.substr(4), bits) && std::isnan(std::bit_cast<double>(bits));
  }
  double d;
  auto res = std::from_chars(tok.data(), tok.data() + tok.size(), d);
  if (res.ec != std::errc() || res.ptr != tok.data() + tok.size()) return false;
  bits = std::bit_cast<uint64_t>(d);
  return true;
}

std::string unescape_name(std::string_view tok, size_t line) {
  if (tok == "-") return {};
  std::string out;
  for (size_t i = 0; i < tok.size(); ++i) {
    if (tok[i] != '%') {
      out += tok[i];
      continue;
    }
    unsigned v;
    if (i + 2 >= tok.size() || !parse_num(tok.substr(i + 1, 2), v, 16))
      fail(line, "bad escape in name '" + std::string(tok) + "'");
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

// A cursor over one line, for the SNAP lines whose brackets and `=`/`@`/`/`
// separators are not whitespace-delimited.
class Cursor {
 public:
  Cursor(std::string_view s, size_t line) : s_(s), line_(line) {}
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_ws();
    return pos_ == s_.size();
  }
  bool peek(char c) {
    skip_ws();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(std::string_view lit) {
    skip_ws();
    if (s_.substr(pos_, lit.size()) != lit) fail(line_, "expected '" + std::string(lit) + "'" + near());
    pos_ += lit.size();
  }
  // Characters up to (not including) one of `stops` or whitespace.
  std::string_view token(std::string_view stops) {
    skip_ws();
    size_t start = pos_;
    while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_])) &&
           stops.find(s_[pos_]) == std::string_view::npos)
      ++pos_;
    return s_.substr(start, pos_ - start);
  }
  uint32_t number(const char* what, std::string_view stops = "=@/[]") {
    std::string_view t = token(stops);
    uint32_t v;
    if (!parse_num(t, v)) fail(line_, std::string("expected ") + what + near(t));
    return v;
  }
  std::string near(std::string_view t = {}) const {
    if (!t.empty()) return ", got '" + std::string(t) + "'";
    if (pos_ >= s_.size()) return " at end of line";
    return " at '" + std::string(s_.substr(pos_, 12)) + "'";
  }

 private:
  std::string_view s_;
  size_t line_;
  size_t pos_ = 0;
};

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> toks;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) toks.push_back(s.substr(start, i - start));
  }
  return toks;
}

// Drops a `--` comment: at the start of the line or after whitespace, so
// negative numbers (`-5`, `-inf`) are never mistaken for one.
std::string_view strip_comment(std::string_view s) {
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] == '-' && s[i + 1] == '-' && (i == 0 || std::isspace(static_cast<unsigned char>(s[i - 1]))))
      return s.substr(0, i);
  return s;
}

bool is_pointer_type(IRType t) {
  return t != IRType::None && t != IRType::Nil && t != IRType::Bool && t != IRType::Int &&
         t != IRType::Float;
}

// The dtype a VTENSOR line or a seen= layout names ("f32"), if any.
std::optional<DType> dtype_named(std::string_view name) {
  for (int d = 0; d < kNumDTypes; ++d)
    if (name == dtype_name(static_cast<DType>(d))) return static_cast<DType>(d);
  return std::nullopt;
}

class Parser {
 public:
  explicit Parser(const ProtoResolver& resolve) : resolve_(resolve) {}

  TraceIR run(std::string_view text) {
    size_t line = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view l = text.substr(pos, nl - pos);
      ++line;
      pos = nl + 1;
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      const std::string_view code = strip_comment(l);
      // A KOBJ's description (print_ins writes it as "  -- WHAT").
      comment_ = l.substr(code.size());
      if (comment_.rfind("-- ", 0) == 0) comment_.remove_prefix(3);
      l = code;
      auto toks = split_ws(l);
      if (toks.empty()) continue;
      if (toks[0] != "|") finish_region(line);
      if (toks[0] == "SNAP")
        parse_snap(l, line);
      else if (toks[0] == "CALL")
        parse_call(toks, line);
      else if (toks[0] == "|")
        add_region_line(l, line);
      else if (toks[0] == "ASSUME")
        parse_assume(toks, line);
      else if (toks[0] == "HEADER")
        parse_header(toks, line);
      else if (toks[0] == "VTENSOR")
        parse_vtensor(l, line);
      else
        parse_ins(toks, line);
    }
    finish_region(line);
    check_refs();
    return std::move(ir_);
  }

 private:
  // "  | %0 = input : f32[s0]": a line of the region of the CALL just read:
  // a kernel call's region, or a recorded Graph IR operation's (graph).
  void add_region_line(std::string_view l, size_t line) {
    if (ir_.calls().empty() || region_done_)
      fail(line, "a '|' region line belongs after a CALL line");
    if (region_text_.empty()) region_line_ = line;
    region_text_ += std::string(l.substr(l.find('|') + 1)) + "\n";
  }
  void finish_region(size_t line) {
    if (ir_.calls().empty() || region_done_) return;
    region_done_ = true;
    CallTarget& c = ir_.calls().back();
    const bool kernel = c.is<call::Kernel>();
    if (region_text_.empty()) {
      if (kernel) fail(line, "a kernel CALL needs its region ('|' lines)");
      return;
    }
    try {
      auto r = std::make_shared<const Region>(parse_region(region_text_, !kernel));
      if (!kernel && r->ops.size() != 1) fail(region_line_, "a recorded Graph IR operation is a region of one op");
      (kernel ? c.as<call::Kernel>().region : c.graph) = std::move(r);
    } catch (const std::invalid_argument& e) {
      fail(region_line_, e.what());
    }
    region_text_.clear();
  }

  std::string region_text_;
  size_t region_line_ = 0;
  bool region_done_ = true;  // the last CALL's '|' lines are read

  void parse_ins(const std::vector<std::string_view>& toks, size_t line) {
    size_t i = 0;
    auto next = [&](const char* what) -> std::string_view {
      if (i >= toks.size()) fail(line, std::string("missing ") + what);
      return toks[i++];
    };
    std::string_view ref_tok = next("reference");
    uint32_t ref;
    if (!parse_num(ref_tok, ref))
      fail(line, "expected an instruction reference, SNAP or CALL, got '" + std::string(ref_tok) + "'");
    if (ref != ir_.size())
      fail(line, "instruction numbered " + std::string(ref_tok) + ", expected " + fmt_ref(ir_.size()));
    bool flagged = false;
    if (i < toks.size() && toks[i] == ">") {
      flagged = true;
      ++i;
    }
    IRType type = parse_type(next("type"), line);
    std::string_view op_tok = next("opcode");
    IROp op = parse_op(op_tok, line);
    const IROpInfo& info = ir_op_info(op);
    if (flagged != ir_is_guard(op))
      fail(line, std::string(info.name) + (flagged ? " is not a guard but is marked '>'" : " is a guard but lacks '>'"));

    uint32_t ops[2] = {0, 0};
    uint64_t cst = 0;
    OperandKind kinds[2] = {info.op1, info.op2};
    for (int k = 0; k < 2; ++k) {
      if (kinds[k] == OperandKind::none) continue;
      std::string_view t = next("operand");
      if (t.starts_with("#")) fail(line, std::string(info.name) + " needs more operands");
      bool ok = true;
      switch (kinds[k]) {
        case OperandKind::ref: ok = parse_ref(t, ops[k]); break;
        case OperandKind::lit:
          if (op == IROp::KBOOL) {
            ok = t == "true" || t == "false";
            ops[k] = t == "true";
          } else {
            ok = parse_num(t, ops[k]);
          }
          break;
        case OperandKind::cst:
          if (op == IROp::KINT) {
            int64_t v = 0;
            ok = parse_num(t, v);
            cst = std::bit_cast<uint64_t>(v);
          } else if (op == IROp::KFLOAT) {
            ok = parse_float_bits(t, cst);
          } else {
            ok = parse_hex_u64(t, cst);
          }
          break;
        case OperandKind::none: break;
      }
      if (!ok) fail(line, "bad operand '" + std::string(t) + "' for " + info.name);
    }
    bool converted_int = false;  // KFLOAT 3 int: TraceIR::kfloat's an_int
    if (op == IROp::KFLOAT && i < toks.size() && toks[i] == "int") {
      converted_int = true;
      ++i;
    }
    uint8_t flags = 0;  // LLOAD f g mixed: kMixedRow
    if (op == IROp::LLOAD && i < toks.size() && toks[i] == "mixed") {
      flags = kMixedRow;
      ++i;
    }
    uint16_t snap = kNoSnap;
    if (i < toks.size() && toks[i].starts_with("#")) {
      uint32_t s;
      if (!parse_num(toks[i].substr(1), s) || s >= kNoSnap)
        fail(line, "bad snapshot number '" + std::string(toks[i]) + "'");
      snap = static_cast<uint16_t>(s);
      ++i;
    }
    if (i < toks.size()) fail(line, "unexpected '" + std::string(toks[i]) + "'");

    if (ir_is_const(op)) {
      if (snap != kNoSnap) fail(line, "constants take no snapshot");
      IRRef got = emit_const(op, type, ops[0], cst, converted_int, line);
      if (got != ref) fail(line, "duplicate constant (same as " + fmt_ref(got) + ")");
    } else {
      ir_[ir_.emit(op, type, ops[0], ops[1], snap)].flags = flags;
    }
    ins_lines_.push_back(line);
  }

  IRRef emit_const(IROp op, IRType type, uint32_t lit, uint64_t cst, bool converted_int, size_t line) {
    auto want = [&](IRType t) {
      if (type != t) fail(line, std::string(ir_op_info(op).name) + " must have type " + ir_type_name(t));
    };
    switch (op) {
      case IROp::KNIL: want(IRType::Nil); return ir_.knil();
      case IROp::KBOOL: want(IRType::Bool); return ir_.kbool(lit != 0);
      case IROp::KINT:
        if (type == IRType::DType) return ir_.kdtype(static_cast<DType>(cst));
        want(IRType::Int);
        return ir_.kint(std::bit_cast<int64_t>(cst));
      case IROp::KFLOAT: {
        want(IRType::Float);
        const double v = std::bit_cast<double>(cst);
        if (converted_int && (!(v >= -0x1p63 && v <= 0x1p63) || v != std::trunc(v)))
          fail(line, "KFLOAT ... int must hold the float of an int");
        return ir_.kfloat(v, converted_int);
      }
      case IROp::KOBJ:
        if (!is_pointer_type(type))
          fail(line, std::string("KOBJ cannot have type ") + ir_type_name(type));
        if (!comment_.empty()) ir_.describe_const(reinterpret_cast<const void*>(static_cast<uintptr_t>(cst)), std::string(comment_));
        return ir_.kobj(reinterpret_cast<const void*>(static_cast<uintptr_t>(cst)), type);
      default: break;
    }
    fail(line, "unknown constant opcode");
  }

  static bool parse_ref(std::string_view t, uint32_t& out) {
    if (t == "none") {
      out = kNoRef;
      return true;
    }
    return parse_num(t, out) && out != kNoRef;
  }

  static IRType parse_type(std::string_view t, size_t line) {
    // IRType has no count; ir_type_name answers "?" past the last type.
    for (int k = 0; k < 256; ++k)
      if (t != "?" && t == ir_type_name(static_cast<IRType>(k))) return static_cast<IRType>(k);
    fail(line, "unknown type '" + std::string(t) + "'");
  }

  static IROp parse_op(std::string_view t, size_t line) {
    for (int k = 0; k < kNumIROps; ++k)
      if (t == ir_op_info(static_cast<IROp>(k)).name) return static_cast<IROp>(k);
    fail(line, "unknown opcode '" + std::string(t) + "'");
  }

  // SNAP #N ir=NNNN pc=P frames=[name@base/callpc ...] [slot=ref ...]
  void parse_snap(std::string_view l, size_t line) {
    Cursor c(l, line);
    c.expect("SNAP");
    c.expect("#");
    uint32_t n = c.number("snapshot number");
    if (n != ir_.snapshots().size())
      fail(line, "snapshot #" + std::to_string(n) + " out of order, expected #" +
                     std::to_string(ir_.snapshots().size()));
    Snapshot s;
    c.expect("ir=");
    s.ir_ref = c.number("IR reference");
    c.expect("pc=");
    s.pc = c.number("pc");
    if (c.peek('b')) {
      c.expect("base=");
      std::string_view name = c.token(" ");
      if (name.empty()) fail(line, "expected a function name after 'base='" + c.near());
      s.base_name = unescape_name(name, line);
      if (resolve_) {
        s.base_proto = resolve_(s.base_name);
        if (!s.base_proto) fail(line, "unknown function '" + s.base_name + "'");
      }
    }
    c.expect("frames=[");
    while (!c.peek(']')) {
      SnapshotFrame f{};
      std::string_view name = c.token("@]");
      if (name.empty()) fail(line, "expected a frame 'name@base/callpc'" + c.near());
      f.name = unescape_name(name, line);
      c.expect("@");
      f.base = c.number("frame base");
      c.expect("/");
      f.call_pc = c.number("call pc");
      f.proto = nullptr;
      if (resolve_) {
        f.proto = resolve_(f.name);
        if (!f.proto) fail(line, "unknown function '" + f.name + "'");
      }
      s.frames.push_back(std::move(f));
    }
    c.expect("]");
    c.expect("[");
    while (!c.peek(']')) {
      SnapshotEntry e{};
      e.slot = c.number("slot");
      c.expect("=");
      e.ref = c.number("IR reference");
      if (!s.entries.empty() && e.slot <= s.entries.back().slot)
        fail(line, "snapshot entries must be sorted by slot, without duplicates");
      s.entries.push_back(e);
    }
    c.expect("]");
    if (!c.at_end()) fail(line, "unexpected text" + c.near());
    ir_.snapshots().push_back(std::move(s));
    snap_lines_.push_back(line);
  }

  // CALL #N kind sub name ptr [dest=slot] [aux=ptr] [kw=NAME,...] [seen=ARG:DTYPE:DIMS,...]
  void parse_call(const std::vector<std::string_view>& toks, size_t line) {
    if (toks.size() < 6 || toks.size() > 10)
      fail(line, "expected 'CALL #N kind sub name ptr [dest=slot] [aux=ptr] [kw=...] [seen=...]'");
    uint32_t n;
    if (!toks[1].starts_with("#") || !parse_num(toks[1].substr(1), n))
      fail(line, "bad call number '" + std::string(toks[1]) + "'");
    if (n != ir_.calls().size())
      fail(line, "call #" + std::to_string(n) + " out of order, expected #" +
                     std::to_string(ir_.calls().size()));
    CallTarget ct{};
    int kind = -1;
    for (int k = 0; k < kNumCallKinds; ++k)
      if (toks[2] == kCallKindNames[k]) kind = k;
    if (kind < 0) fail(line, "unknown call kind '" + std::string(toks[2]) + "'");
    CallFields f;
    uint32_t sub;
    if (!parse_num(toks[3], sub) || sub > 255) fail(line, "bad call sub-code '" + std::string(toks[3]) + "'");
    f.sub = static_cast<uint8_t>(sub);
    ct.name = unescape_name(toks[4], line);
    uint64_t p;
    if (!parse_hex_u64(toks[5], p)) fail(line, "bad call pointer '" + std::string(toks[5]) + "'");
    f.ptr = reinterpret_cast<const void*>(static_cast<uintptr_t>(p));
    size_t t = 6;
    if (t < toks.size() && toks[t].starts_with("dest=")) {
      int32_t dest;
      if (!parse_num(toks[t].substr(5), dest) || dest < 0)
        fail(line, "bad call destination '" + std::string(toks[t]) + "'");
      ct.dest_slot = dest;
      ++t;
    }
    if (t < toks.size() && toks[t].starts_with("aux=")) {
      uint64_t a;
      if (!parse_hex_u64(toks[t].substr(4), a)) fail(line, "bad call aux pointer '" + std::string(toks[t]) + "'");
      f.aux = reinterpret_cast<const void*>(static_cast<uintptr_t>(a));
      ++t;
    }
    if (t < toks.size() && toks[t].starts_with("kw=")) {
      for (std::string_view rest = toks[t].substr(3); !rest.empty();) {
        const size_t comma = rest.find(',');
        const std::string_view name = rest.substr(0, comma);
        if (name.empty()) fail(line, "bad keyword list '" + std::string(toks[t]) + "'");
        f.kw.push_back(unescape_name(name, line));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
      ++t;
    }
    if (t < toks.size() && toks[t].starts_with("seen=")) ct.seen = parse_seen(toks[t].substr(5), line), ++t;
    if (t != toks.size())
      fail(line, "unexpected '" + std::string(toks[t]) + "' in CALL line (expected dest=SLOT, aux=PTR, kw=..., seen=...)");
    auto what = make_call(static_cast<CallTarget::Kind>(kind), std::move(f));
    if (const char* const* field = std::get_if<const char*>(&what))
      fail(line, "a " + std::string(toks[2]) + " call has no " + *field + " (it must be 0 or absent)");
    ct.what = std::move(std::get<CallTarget::What>(what));
    ir_.calls().push_back(std::move(ct));
    region_done_ = false;
  }

  // ARG:DTYPE:DIMS,... with DIMS the dimensions joined by 'x' (empty: 0-d).
  std::vector<std::optional<VirtualTensor>> parse_seen(std::string_view text, size_t line) {
    std::vector<std::optional<VirtualTensor>> seen;
    auto bad = [&] { fail(line, "bad seen= layout list '" + std::string(text) + "'"); };
    for (std::string_view rest = text; !rest.empty();) {
      const size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      const size_t c1 = item.find(':'), c2 = c1 == std::string_view::npos ? c1 : item.find(':', c1 + 1);
      uint32_t arg;
      if (c2 == std::string_view::npos || !parse_num(item.substr(0, c1), arg) || arg > 255) bad();
      VirtualTensor vt;
      const std::optional<DType> dt = dtype_named(item.substr(c1 + 1, c2 - c1 - 1));
      if (!dt) bad();
      vt.dtype = *dt;
      for (std::string_view dims = item.substr(c2 + 1); !dims.empty();) {
        const size_t x = dims.find('x');
        int64_t dim;
        if (!parse_num(dims.substr(0, x), dim) || dim < 0) bad();
        vt.shape.push_back(dim);
        dims = x == std::string_view::npos ? std::string_view{} : dims.substr(x + 1);
      }
      if (vt.shape.size() > 8 || arg < seen.size()) bad();  // ranks up to 8; arguments in order
      seen.resize(arg + 1);
      seen[arg] = std::move(vt);
    }
    return seen;
  }

  // ASSUME global=N value=PTR
  void parse_assume(const std::vector<std::string_view>& toks, size_t line) {
    uint32_t g;
    uint64_t v;
    if (toks.size() != 3 || !toks[1].starts_with("global=") || !parse_num(toks[1].substr(7), g) ||
        !toks[2].starts_with("value=") || !parse_hex_u64(toks[2].substr(6), v))
      fail(line, "expected 'ASSUME global=N value=PTR'");
    ir_.assumed_globals().push_back({g, reinterpret_cast<const void*>(static_cast<uintptr_t>(v))});
    if (!comment_.empty()) ir_.describe_const(ir_.assumed_globals().back().value, std::string(comment_));
  }

  // HEADER #N: the peeled loop's header snapshot (TraceIR::header_snapshot).
  void parse_header(const std::vector<std::string_view>& toks, size_t line) {
    uint32_t n;
    if (toks.size() != 2 || !toks[1].starts_with("#") || !parse_num(toks[1].substr(1), n) || n >= kNoSnap)
      fail(line, "expected 'HEADER #N'");
    ir_.set_header_snapshot(static_cast<uint16_t>(n));
    header_line_ = line;
  }

  // VTENSOR #N DTYPE [d0, d1, ...]
  void parse_vtensor(std::string_view l, size_t line) {
    auto toks = split_ws(l);
    const char* usage = "expected 'VTENSOR #N DTYPE [d0, d1, ...]'";
    if (toks.size() < 4) fail(line, usage);
    uint32_t n;
    if (!toks[1].starts_with("#") || !parse_num(toks[1].substr(1), n))
      fail(line, "bad virtual tensor number '" + std::string(toks[1]) + "'");
    auto& vts = ir_.virtual_tensors();
    if (n != vts.size())
      fail(line, "virtual tensor #" + std::to_string(n) + " out of order, expected #" + std::to_string(vts.size()));
    VirtualTensor vt;
    const std::optional<DType> dt = dtype_named(toks[2]);
    if (!dt) fail(line, "unknown dtype '" + std::string(toks[2]) + "'");
    vt.dtype = *dt;
    // The shape: everything after the dtype, "[" dims separated by ", " "]".
    std::string_view rest = l.substr(l.find(toks[2]) + toks[2].size());
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) rest.remove_suffix(1);
    if (rest.size() < 2 || rest.front() != '[' || rest.back() != ']') fail(line, usage);
    rest = rest.substr(1, rest.size() - 2);
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string_view tok = rest.substr(0, comma);
      while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.front()))) tok.remove_prefix(1);
      while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.remove_suffix(1);
      int64_t dim;
      if (!parse_num(tok, dim) || dim < 0 || dim > (int64_t{1} << 20))
        fail(line, "bad dimension '" + std::string(tok) + "'");
      vt.shape.push_back(dim);
      if (vt.shape.size() > 8 || vt.numel() > (int64_t{1} << 20)) fail(line, "virtual tensor too large");
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    vts.push_back(std::move(vt));
  }

  // Cross-line checks, once every instruction, snapshot and call is known.
  void check_refs() {
    size_t n = ir_.size();
    for (IRRef r = 0; r < n; ++r) {
      const IRIns& in = ir_[r];
      size_t line = ins_lines_[r];
      for_each_operand_ref(in, [&](IRRef a, int k) {
        if (a >= n) fail(line, "reference " + fmt_ref(a) + " does not exist");
        // SSA order; only a PHI's back-edge value may come from later.
        bool backedge = in.op == IROp::PHI && k == 1;
        if (!backedge && a >= r) fail(line, "reference " + fmt_ref(a) + " is not before the instruction");
      });
      if (in.snap != kNoSnap && in.snap >= ir_.snapshots().size())
        fail(line, "snapshot #" + std::to_string(in.snap) + " does not exist");
      if (in.op == IROp::CALL && in.op2 >= ir_.calls().size())
        fail(line, "call #" + std::to_string(in.op2) + " does not exist");
      if (in.op == IROp::VNEWTENSOR) {
        if (in.op2 >= ir_.virtual_tensors().size())
          fail(line, "virtual tensor #" + std::to_string(in.op2) + " does not exist");
        if (static_cast<int64_t>(carg_list(ir_, in.op1).size()) != ir_.virtual_tensors()[in.op2].numel())
          fail(line, "the element count does not match VTENSOR #" + std::to_string(in.op2));
      }
    }
    for (size_t k = 0; k < ir_.snapshots().size(); ++k) {
      const Snapshot& s = ir_.snapshots()[k];
      if (s.ir_ref > n) fail(snap_lines_[k], "ir=" + fmt_ref(s.ir_ref) + " is past the trace");
      for (const SnapshotEntry& e : s.entries)
        if (e.ref >= n) fail(snap_lines_[k], "reference " + fmt_ref(e.ref) + " does not exist");
    }
    if (ir_.header_snapshot() != kNoSnap && ir_.header_snapshot() >= ir_.snapshots().size())
      fail(header_line_, "HEADER #" + std::to_string(ir_.header_snapshot()) + ": the snapshot does not exist");
  }

  const ProtoResolver& resolve_;
  TraceIR ir_;
  std::string_view comment_;  // the current line's `--` comment, without "-- "
  std::vector<size_t> ins_lines_;
  std::vector<size_t> snap_lines_;
  size_t header_line_ = 0;
};

}  // namespace

std::string print_ir(const TraceIR& ir) {
  std::string out;
  for (IRRef r = 0; r < ir.size(); ++r) {
    out += print_ins(ir, r);
    out += '\n';
  }
  const auto& snaps = ir.snapshots();
  for (size_t k = 0; k < snaps.size(); ++k) {
    const Snapshot& s = snaps[k];
    out += "SNAP #" + std::to_string(k) + " ir=" + fmt_ref(s.ir_ref) + " pc=" + std::to_string(s.pc);
    if (s.base_proto || !s.base_name.empty())
      out += " base=" + escape_name(s.base_proto ? s.base_proto->name : s.base_name);
    out += " frames=[";
    for (size_t f = 0; f < s.frames.size(); ++f) {
      const SnapshotFrame& fr = s.frames[f];
      if (f) out += ' ';
      out += escape_name(frame_name(fr)) + "@" + std::to_string(fr.base) + "/" + std::to_string(fr.call_pc);
    }
    out += "] [";
    for (size_t e = 0; e < s.entries.size(); ++e) {
      if (e) out += ' ';
      out += std::to_string(s.entries[e].slot) + "=" + fmt_ref(s.entries[e].ref);
    }
    out += "]\n";
  }
  if (ir.header_snapshot() != kNoSnap) out += "HEADER #" + std::to_string(ir.header_snapshot()) + "\n";
  const auto& calls = ir.calls();
  for (size_t k = 0; k < calls.size(); ++k) {
    const CallTarget& c = calls[k];
    const CallFields f = call_fields(c);
    out += "CALL #" + std::to_string(k) + " " + kCallKindNames[static_cast<int>(c.kind())] + " " +
           std::to_string(f.sub) + " " + escape_name(c.name) + " " +
           fmt_hex(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(f.ptr)));
    // Most calls return scalars: the owning slot is shown only when there is one.
    if (c.dest_slot >= 0) out += " dest=" + std::to_string(c.dest_slot);
    if (f.aux) out += " aux=" + fmt_hex(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(f.aux)));
    if (!f.kw.empty()) {
      out += " kw=";
      for (size_t i = 0; i < f.kw.size(); ++i) out += (i ? "," : "") + escape_name(f.kw[i]);
    }
    if (!c.seen.empty()) {
      std::string items;
      for (size_t a = 0; a < c.seen.size(); ++a) {
        if (!c.seen[a]) continue;
        items += (items.empty() ? "" : ",") + std::to_string(a) + ":" + dtype_name(c.seen[a]->dtype) + ":";
        for (size_t d = 0; d < c.seen[a]->shape.size(); ++d) items += (d ? "x" : "") + std::to_string(c.seen[a]->shape[d]);
      }
      out += " seen=" + items;
    }
    out += '\n';
    // A kernel's region or a recorded operation's, one line per value, each after "  | ".
    if (const Region* region = c.kernel_region() ? c.kernel_region() : c.graph.get()) {
      const std::string text = region->str();
      for (size_t at = 0; at < text.size();) {
        const size_t nl = text.find('\n', at);
        out += "  | " + text.substr(at, nl - at) + "\n";
        at = nl == std::string::npos ? text.size() : nl + 1;
      }
    }
  }
  for (const auto& a : ir.assumed_globals()) {
    out += "ASSUME global=" + std::to_string(a.index) +
           " value=" + fmt_hex(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(a.value)));
    if (const std::string* what = ir.const_description(a.value); what && !what->empty()) out += "  -- " + *what;
    out += "\n";
  }
  const auto& vts = ir.virtual_tensors();
  for (size_t k = 0; k < vts.size(); ++k) {
    out += "VTENSOR #" + std::to_string(k) + " " + dtype_name(vts[k].dtype) + " [";
    for (size_t d = 0; d < vts[k].shape.size(); ++d) out += (d ? ", " : "") + std::to_string(vts[k].shape[d]);
    out += "]\n";
  }
  return out;
}

TraceIR parse_ir(std::string_view text, const ProtoResolver& resolve) { return Parser(resolve).run(text); }

}  // namespace tessera::jit
