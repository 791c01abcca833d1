// IR text comparison up to a consistent renaming of value numbers.
//
// Tests state what a trace should look like as IR text (print_ir's form).
// Written with plain string equality, an expectation pins down every value's
// number too, which says nothing about the trace: a pass that interns one
// more constant renumbers everything after it. EXPECT_IR_EQ(actual, expected)
// compares the texts line by line and character by character, except that
// the value numbers may differ, as long as one renaming maps the expected
// text's numbers onto the actual text's: one-to-one, and the same at every
// definition and every use (operands, a snapshot's ir= and its slot
// entries). Everything else (line order, opcodes, types, guard marks,
// literals, snapshot numbers, CALL lines, spacing) must be identical.
//
// With both texts numbered from 0000 in order, as print_ir numbers them,
// the only renaming possible is the identity: such a comparison is exactly
// string equality. An expectation may number its values in any other way
// (e.g. keep the input's numbers for the instructions a pass leaves).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tracer/trace_ir.h"

namespace tessera::jit::irtest {

// One line with its value numbers cut out: `shape` has each number replaced
// by '\x01', `refs` the numbers in order ("none" for a missing operand).
struct LineRefs {
  std::string shape;
  std::vector<std::string> refs;
};

inline const IROpInfo* op_by_name(std::string_view name) {
  for (int k = 0; k < kNumIROps; ++k) {
    const IROpInfo& info = ir_op_info(static_cast<IROp>(k));
    if (name == info.name) return &info;
  }
  return nullptr;
}

// Cuts the value numbers out of one line of IR text. Instruction lines: the
// instruction's own number and its ref operands (ir.def says which operands
// are refs; a literal such as KINT 1234 or SLOAD 1 is not one). SNAP lines:
// ir= and the values of the slot entries (the last [...]). Other lines
// (CALL, ASSUME, VTENSOR) have no value numbers.
inline LineRefs cut_refs(std::string_view line) {
  LineRefs out;
  std::vector<std::pair<size_t, size_t>> spans;  // [begin, end) of each number
  auto is_ref_token = [](std::string_view t) {
    if (t == "none") return true;
    if (t.empty()) return false;
    for (char c : t)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
  };
  if (line.starts_with("SNAP ")) {
    const size_t ir = line.find(" ir=");
    if (ir != std::string_view::npos) {
      size_t b = ir + 4, e = b;
      while (e < line.size() && std::isdigit(static_cast<unsigned char>(line[e]))) ++e;
      spans.emplace_back(b, e);
    }
    const size_t open = line.rfind('[');
    for (size_t p = open == std::string_view::npos ? line.size() : open; p < line.size(); ++p) {
      if (line[p] != '=') continue;
      size_t e = p + 1;
      while (e < line.size() && line[e] != ' ' && line[e] != ']') ++e;
      if (is_ref_token(line.substr(p + 1, e - p - 1))) spans.emplace_back(p + 1, e);
    }
  } else if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
    // Whitespace-separated tokens: NUMBER [>] TYPE OP [OPERAND [OPERAND]] [#SNAP]
    std::vector<std::pair<size_t, size_t>> toks;
    for (size_t p = 0; p < line.size();) {
      while (p < line.size() && line[p] == ' ') ++p;
      size_t e = p;
      while (e < line.size() && line[e] != ' ') ++e;
      if (e > p) toks.emplace_back(p, e);
      p = e;
    }
    auto tok = [&](size_t k) { return line.substr(toks[k].first, toks[k].second - toks[k].first); };
    spans.push_back(toks[0]);
    size_t k = 1;
    if (k < toks.size() && tok(k) == ">") ++k;
    ++k;  // type
    const IROpInfo* info = k < toks.size() ? op_by_name(tok(k)) : nullptr;
    ++k;
    if (info) {
      for (OperandKind kind : {info->op1, info->op2}) {
        if (kind == OperandKind::none || k >= toks.size()) continue;
        if (kind == OperandKind::ref && is_ref_token(tok(k))) spans.push_back(toks[k]);
        ++k;
      }
    }
  }
  size_t at = 0;
  for (auto [b, e] : spans) {
    out.shape.append(line.substr(at, b - at));
    out.shape += '\x01';
    out.refs.emplace_back(line.substr(b, e - b));
    at = e;
  }
  out.shape.append(line.substr(at));
  return out;
}

inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return lines;
}

// The comparison, as a GoogleTest predicate-formatter (EXPECT_IR_EQ).
inline ::testing::AssertionResult ir_texts_match(const char* actual_expr, const char* expected_expr,
                                                 std::string_view actual, std::string_view expected) {
  auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure() << actual_expr << " does not match " << expected_expr
                                         << " up to value numbering: " << why << "\nexpected:\n"
                                         << expected << "actual:\n"
                                         << actual;
  };
  // A final newline is part of the text: one text ending in it and the
  // other not is a difference.
  if (actual.ends_with('\n') != expected.ends_with('\n')) return fail("one text ends in a newline, the other not");
  const std::vector<std::string_view> a = split_lines(actual), e = split_lines(expected);
  std::unordered_map<std::string, std::string> e_to_a, a_to_e;
  for (size_t i = 0; i < std::max(a.size(), e.size()); ++i) {
    if (i >= a.size()) return fail("line " + std::to_string(i + 1) + " is missing: " + std::string(e[i]));
    if (i >= e.size()) return fail("line " + std::to_string(i + 1) + " is extra: " + std::string(a[i]));
    const LineRefs la = cut_refs(a[i]), le = cut_refs(e[i]);
    const std::string where = "line " + std::to_string(i + 1) + "\n  expected: " + std::string(e[i]) +
                              "\n  actual:   " + std::string(a[i]) + "\n";
    if (la.shape != le.shape || la.refs.size() != le.refs.size()) return fail(where + "  (differs)");
    for (size_t k = 0; k < la.refs.size(); ++k) {
      const std::string& x = le.refs[k];
      const std::string& y = la.refs[k];
      if (x == "none" || y == "none") {
        if (x != y) return fail(where + "  (" + x + " is " + y + ")");
        continue;
      }
      // emplace keeps an earlier binding: a clash shows as a different value.
      const std::string& was_a = e_to_a.emplace(x, y).first->second;
      const std::string& was_e = a_to_e.emplace(y, x).first->second;
      if (was_a != y) return fail(where + "  (expected value " + x + " was " + was_a + " before, is " + y + " here)");
      if (was_e != x)
        return fail(where + "  (actual value " + y + " stood for expected " + was_e + " before, for " + x + " here)");
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tessera::jit::irtest

// EXPECT_EQ's argument order: the printed IR first, the expectation second.
#define EXPECT_IR_EQ(actual, expected) EXPECT_PRED_FORMAT2(::tessera::jit::irtest::ir_texts_match, actual, expected)
#define ASSERT_IR_EQ(actual, expected) ASSERT_PRED_FORMAT2(::tessera::jit::irtest::ir_texts_match, actual, expected)
