// The kernel IR's text form: the parser (kernel_text.h). A tokenizer and a
// recursive-descent reader of the grammar the printer writes.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "codegen/kernel/kernel_text.h"

namespace tessera::kir {

namespace {

struct Token {
  enum Kind { Word, Value, Global, Punct, End } kind;
  std::string text;  // without the % or @ sigil
  int line, col;
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '+'; }

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  int line = 1, col = 1;
  size_t i = 0;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n; ++k, ++i) {
      if (s[i] == '\n') ++line, col = 1;
      else ++col;
    }
  };
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance(1);
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') advance(1);
      continue;
    }
    Token t{Token::Punct, std::string(1, c), line, col};
    if (c == '%' || c == '@') {
      t.kind = c == '%' ? Token::Value : Token::Global;
      size_t j = i + 1;
      while (j < s.size() && word_char(s[j])) ++j;
      t.text = std::string(s.substr(i + 1, j - i - 1));
      if (t.text.empty()) throw ParseError(std::to_string(line) + ":" + std::to_string(col) + ": a name must follow " + c);
      advance(j - i);
    } else if (word_char(c)) {
      size_t j = i;
      while (j < s.size() && word_char(s[j])) ++j;
      t.kind = Token::Word;
      t.text = std::string(s.substr(i, j - i));
      advance(j - i);
    } else if (std::string_view("=,:[](){}<>*").find(c) != std::string_view::npos) {
      advance(1);
    } else {
      throw ParseError(std::to_string(line) + ":" + std::to_string(col) + ": unexpected character '" + c + "'");
    }
    out.push_back(std::move(t));
  }
  out.push_back(Token{Token::End, "", line, col});
  return out;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : toks_(tokenize(text)) {}

  Kernel run() {
    expect_word("kernel");
    k_.name = take(Token::Global, "a kernel name (@name)").text;
    if (accept_word("dims")) dims();
    while (peek_word("in") || peek_word("out")) param();
    expect_word("grid");
    expect("[");
    do k_.grid.push_back(extent());
    while (accept(","));
    expect("]");
    expect("{");
    block(k_.body);
    expect("}");
    if (cur().kind != Token::End) error("text after the kernel");
    return std::move(k_);
  }

 private:
  const Token& cur() const { return toks_[pos_]; }
  [[noreturn]] void error(const std::string& what) const {
    throw ParseError(std::to_string(cur().line) + ":" + std::to_string(cur().col) + ": " + what +
                     (cur().kind == Token::End ? " (at the end)" : ", found '" + cur().text + "'"));
  }
  bool accept(std::string_view p) {
    if (cur().kind != Token::Punct || cur().text != p) return false;
    ++pos_;
    return true;
  }
  void expect(std::string_view p) {
    if (!accept(p)) error("expected '" + std::string(p) + "'");
  }
  bool peek_word(std::string_view w) const { return cur().kind == Token::Word && cur().text == w; }
  bool accept_word(std::string_view w) {
    if (!peek_word(w)) return false;
    ++pos_;
    return true;
  }
  void expect_word(std::string_view w) {
    if (!accept_word(w)) error("expected '" + std::string(w) + "'");
  }
  Token take(Token::Kind kind, const std::string& what) {
    if (cur().kind != kind) error("expected " + what);
    return toks_[pos_++];
  }

  int64_t integer(const std::string& what) {
    Token t = take(Token::Word, what);
    char* end = nullptr;
    long long v = std::strtoll(t.text.c_str(), &end, 10);
    if (*end != '\0') { --pos_; error("expected " + what); }
    return v;
  }

  int dim_ref(const std::string& name) {
    int d = k_.dim_index(name);
    if (d < 0) { --pos_; error("no dim named " + name); }
    return d;
  }

  void dims() {
    do {
      std::string name = take(Token::Word, "a dim name").text;
      if (k_.dim_index(name) >= 0) { --pos_; error("dim " + name + " declared twice"); }
      k_.dims.push_back(name);
      if (accept("=")) {
        k_.dim_values.resize(k_.dims.size());
        k_.dim_values.back() = integer("the dim's value");
      } else if (!k_.dim_values.empty()) {
        k_.dim_values.resize(k_.dims.size());
      }
    } while (accept(","));
  }

  Elem elem(const std::string& text) {
    auto e = elem_by_name(text);
    if (!e) { --pos_; error("expected an element type (i1 i32 i64 f16 bf16 f32 f64)"); }
    return *e;
  }

  void param() {
    Param p;
    p.output = cur().text == "out";
    ++pos_;
    p.name = take(Token::Value, "a param name (%name)").text;
    if (k_.param_index(p.name) >= 0) { --pos_; error("param %" + p.name + " declared twice"); }
    expect(":");
    p.elem = elem(take(Token::Word, "an element type").text);
    expect("[");
    if (!accept("]")) {
      do {
        Token t = take(Token::Word, "a dim name or size");
        if (std::isdigit(static_cast<unsigned char>(t.text[0]))) {
          --pos_;
          p.shape.push_back(DimRef{-1, integer("a size")});
        } else {
          p.shape.push_back(DimRef{dim_ref(t.text), 0});
        }
      } while (accept(","));
      expect("]");
    }
    k_.params.push_back(std::move(p));
  }

  // factor*dim*... or cdiv(that, div)
  Extent extent() {
    Extent e;
    const bool cdiv = accept_word("cdiv");
    if (cdiv) expect("(");
    do {
      Token t = take(Token::Word, "a dim name or a number");
      if (std::isdigit(static_cast<unsigned char>(t.text[0]))) {
        --pos_;
        e.factor *= integer("a number");
      } else {
        e.dims.push_back(dim_ref(t.text));
      }
    } while (accept("*"));
    if (cdiv) {
      expect(",");
      e.div = integer("the divisor");
      expect(")");
    }
    return e;
  }

  Type type() {
    Token t = take(Token::Word, "a type");
    if (t.text != "tile") return Type{elem(t.text), {}};
    expect("<");
    std::string spec = take(Token::Word, "a tile shape (64x64xf32)").text;
    expect(">");
    Type ty;
    size_t start = 0;
    while (true) {
      size_t x = spec.find('x', start);
      if (x == std::string::npos) break;
      std::string part = spec.substr(start, x - start);
      char* end = nullptr;
      long long d = std::strtoll(part.c_str(), &end, 10);
      if (part.empty() || *end != '\0' || d < 1) { pos_ -= 2; error("bad tile shape"); }
      ty.shape.push_back(d);
      start = x + 1;
    }
    auto e = elem_by_name(spec.substr(start));
    if (!e || ty.shape.empty()) { pos_ -= 2; error("bad tile type"); }
    ty.elem = *e;
    return ty;
  }

  ValueId use() {
    Token t = take(Token::Value, "a value (%name)");
    auto it = names_.find(t.text);
    if (it == names_.end()) { --pos_; error("%" + t.text + " is not defined"); }
    return it->second;
  }

  ValueId def(const std::string& name, Type t) {
    if (names_.count(name)) error("%" + name + " is defined twice");
    ValueId v = k_.new_value(std::move(t), name);
    names_[name] = v;
    return v;
  }

  int param_ref() {
    Token t = take(Token::Value, "a param (%name)");
    int p = k_.param_index(t.text);
    if (p < 0) { --pos_; error("no param named %" + t.text); }
    return p;
  }

  std::vector<ValueId> uses() {
    std::vector<ValueId> out;
    if (cur().kind != Token::Value) return out;
    do out.push_back(use());
    while (cur().kind == Token::Punct && cur().text == "," && toks_[pos_ + 1].kind == Token::Value && accept(","));
    return out;
  }

  void block(Block& b) {
    while (!(cur().kind == Token::Punct && cur().text == "}")) {
      if (cur().kind == Token::End) error("expected '}'");
      inst(b);
    }
  }

  void inst(Block& b) {
    std::vector<std::string> results;
    if (cur().kind == Token::Value) {
      do results.push_back(take(Token::Value, "a result").text);
      while (accept(","));
      expect("=");
    }
    const Token optok = take(Token::Word, "an operation");
    std::string opname = optok.text, suffix;
    if (size_t dot = opname.find('.'); dot != std::string::npos) suffix = opname.substr(dot + 1), opname.resize(dot);
    auto op = op_by_name(opname);
    if (!op) { --pos_; error("unknown operation"); }
    if (*op == KOp::For) return for_loop(b, results);
    Inst in;
    in.op = *op;
    const KShape shape = op_info(*op).shape;
    std::string literal;
    switch (shape) {
      case KShape::Const: literal = take(Token::Word, "a literal").text; break;
      case KShape::Dim: in.index = dim_ref(take(Token::Word, "a dim name").text); break;
      case KShape::ProgramId: in.index = static_cast<int32_t>(integer("a grid axis")); break;
      case KShape::Cmp: {
        bool found = false;
        for (int p = 0; p <= static_cast<int>(Pred::Ge); ++p)
          if (suffix == pred_name(static_cast<Pred>(p))) in.pred = static_cast<Pred>(p), found = true;
        if (!found) { --pos_; error("cmp needs a predicate: cmp.eq ne lt le gt ge"); }
        in.operands = uses();
        break;
      }
      case KShape::Reduce:
      case KShape::Broadcast:
        if (shape == KShape::Reduce) {
          bool found = false;
          for (int r = 0; r <= static_cast<int>(ReduceKind::ArgMax); ++r)
            if (suffix == reduce_name(static_cast<ReduceKind>(r))) in.reduce = static_cast<ReduceKind>(r), found = true;
          if (!found) { --pos_; error("reduce needs a kind: reduce.sum max min argmax"); }
        }
        in.operands = uses();
        expect(",");
        expect_word("axis");
        in.index = static_cast<int32_t>(integer("an axis"));
        break;
      case KShape::Load:
      case KShape::Store:
        in.index = param_ref();
        expect("[");
        in.operands.push_back(use());
        expect("]");
        if (shape == KShape::Store) {
          expect(",");
          in.operands.push_back(use());
        }
        if (accept(",")) {
          expect_word("mask");
          in.operands.push_back(use());
          if (shape == KShape::Load && accept(",")) {
            expect_word("other");
            in.operands.push_back(use());
          }
        }
        break;
      case KShape::BlockLoad:
        if (!suffix.empty() && suffix != "t") { --pos_; error("load_block's only suffix is .t (transposed)"); }
        in.transposed = suffix == "t";
        in.index = param_ref();
        expect("[");
        in.operands = uses();
        expect("]");
        break;
      default: in.operands = uses(); break;
    }
    if (!suffix.empty() && shape != KShape::Cmp && shape != KShape::Reduce && shape != KShape::BlockLoad)
      error("only cmp, reduce and load_block take a suffix");
    if (shape == KShape::Store || shape == KShape::Yield) {
      if (!results.empty()) error(std::string(op_info(*op).name) + " gives no value");
    } else {
      if (results.size() != 1) error(std::string(op_info(*op).name) + " gives one value");
      expect(":");
      const size_t type_at = pos_;
      Type t = type();
      if (shape == KShape::Const) {
        if (t.is_tile()) {
          pos_ = type_at;
          error("a constant is a scalar");
        }
        if (elem_is_float(t.elem)) {
          char* end = nullptr;
          in.fvalue = std::strtod(literal.c_str(), &end);
          if (*end != '\0') error("bad float literal " + literal);
        } else {
          char* end = nullptr;
          in.ivalue = std::strtoll(literal.c_str(), &end, 10);
          if (*end != '\0') error("bad int literal " + literal);
        }
      }
      in.results.push_back(def(results[0], std::move(t)));
    }
    b.insts.push_back(std::move(in));
  }

  void for_loop(Block& b, const std::vector<std::string>& results) {
    Inst in;
    in.op = KOp::For;
    in.body = std::make_unique<Block>();
    std::string iv = take(Token::Value, "the induction variable").text;
    expect("=");
    in.operands.push_back(use());
    expect_word("to");
    in.operands.push_back(use());
    expect_word("step");
    in.operands.push_back(use());
    std::vector<std::string> iters;
    if (accept_word("iter")) {
      expect("(");
      do {
        iters.push_back(take(Token::Value, "an iter value").text);
        expect("=");
        in.operands.push_back(use());
      } while (accept(","));
      expect(")");
    }
    if (results.size() != iters.size()) error("a for loop gives one result per iter value");
    expect("{");
    in.body->args.push_back(def(iv, Type{Elem::I64, {}}));
    for (size_t i = 0; i < iters.size(); ++i)
      in.body->args.push_back(def(iters[i], k_.value(in.operands[3 + i]).type));
    block(*in.body);
    expect("}");
    for (size_t i = 0; i < results.size(); ++i) in.results.push_back(def(results[i], k_.value(in.operands[3 + i]).type));
    b.insts.push_back(std::move(in));
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  Kernel k_;
  std::unordered_map<std::string, ValueId> names_;
};

}  // namespace

Kernel parse(std::string_view text) { return Parser(text).run(); }

}  // namespace tessera::kir
