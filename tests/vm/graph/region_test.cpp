// Regions of Graph IR operations (vm/graph/region.h): result types, what
// joins a region, the text form and its reading, binding symbols, and the
// reference run.
#include <gtest/gtest.h>

#include <stdexcept>

#include "vm/graph/region.h"

namespace tessera {
namespace {

Region sample() {
  Region r;
  const int n = r.new_symbol(), d = r.new_symbol();
  const int x = r.add_tensor_input(DType::F16, {n, d});
  const int s = r.add_scalar_input(ScalarKind::Float);
  const int a = *r.add(OpId::Mul, {x, s});
  const int row = r.add_tensor_input(DType::F32, {d});
  const int b = *r.add(OpId::Add, {a, row});
  const int c = *r.add(OpId::Cast, {*r.add(OpId::Gt, {b, row})}, DType::I32);
  r.outputs = {b, c};
  return r;
}

TEST(Region, TypesAndText) {
  const Region r = sample();
  EXPECT_EQ(r.str(),
            "%0 = input : f16[s0, s1]\n%1 = input : float\n%2 = mul(%0, %1) : f16[s0, s1]\n"
            "%3 = input : f32[s1]\n%4 = add(%2, %3) : f32[s0, s1]\n%5 = gt(%4, %3) : bool[s0, s1]\n"
            "%6 = cast(%5, i32) : i32[s0, s1]\noutputs %4 %6\n");
  EXPECT_EQ(parse_region(r.str()).str(), r.str());
}

TEST(Region, BroadcastsMergeSymbolsOfEqualSeenSize) {
  Region r;
  // [64, 64] x and a [64] row, each dim a symbol of its own as fusion makes them.
  const int x = r.add_tensor_input(DType::F32, {r.new_symbol(64), r.new_symbol(64)});
  const int row = r.add_tensor_input(DType::F32, {r.new_symbol(64)});
  const int y = *r.add(OpId::Add, {x, row});  // x's cols and row's one symbol; x's rows their own
  r.outputs = {y};
  r.compact_symbols();
  EXPECT_EQ(r.num_symbols, 2);
  EXPECT_EQ(r.str(), "%0 = input : f32[s0, s1]\n%1 = input : f32[s1]\n%2 = add(%0, %1) : f32[s0, s1]\noutputs %2\n");
  EXPECT_EQ(r.symbol_sizes, (std::vector<int64_t>{64, 64}));
  // Non-square inputs bind: rows were never made equal to cols.
  const std::vector<Value> in = {make_tensor(DType::F32, {3, 64}), make_tensor(DType::F32, {64})};
  EXPECT_EQ(bind_symbols(r, in), (std::vector<int64_t>{3, 64}));
}

TEST(Region, BroadcastOfDifferentSeenSizesDoesNotFuseAndChangesNothing) {
  Region r;
  const int a = r.add_tensor_input(DType::F32, {r.new_symbol(8), r.new_symbol(4)});
  const int b = r.add_tensor_input(DType::F32, {r.new_symbol(8), r.new_symbol(5)});
  const std::string before = r.str();
  EXPECT_EQ(r.add(OpId::Mul, {a, b}), std::nullopt);  // the interpreter raises here
  EXPECT_EQ(r.str(), before);
  // A region read from text knows no sizes: different symbols never merge.
  Region p = parse_region("%0 = input : f32[s0]\n%1 = input : f32[s1]\noutputs %0\n");
  EXPECT_EQ(p.add(OpId::Add, {0, 1}), std::nullopt);
}

TEST(Region, WhereMergesAcrossItsThreeOperands) {
  Region r;
  const int c = r.add_tensor_input(DType::Bool, {r.new_symbol(6), kDimOne});
  const int a = r.add_tensor_input(DType::F32, {r.new_symbol(7)});
  const int b = r.add_tensor_input(DType::F32, {r.new_symbol(6), r.new_symbol(7)});
  const int w = *r.add(OpId::Where, {c, a, b});
  r.outputs = {w};
  r.compact_symbols();
  EXPECT_EQ(r.str(),
            "%0 = input : bool[s0, 1]\n%1 = input : f32[s1]\n%2 = input : f32[s0, s1]\n"
            "%3 = where(%0, %1, %2) : f32[s0, s1]\noutputs %3\n");
}

TEST(Region, ReadingRefusesWhatIsNotARegion) {
  auto error = [](const std::string& text) {
    try {
      parse_region(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("%1 = input : f32[s0]\n"), "region line 1: values must be numbered in order");
  EXPECT_EQ(error("%0 = input : f32[s0]\n%1 = frob(%0) : f32[s0]\n"), "region line 2: unknown operation frob");
  EXPECT_EQ(error("%0 = input : f32[s0]\n%1 = exp(%0) : f16[s0]\n"), "region line 2: the operands give f32[s0]");
  EXPECT_EQ(error("%0 = input : i64[s0]\n%1 = input : float\n%2 = add(%0, %1) : f32[s0]\n"),
            "region line 3: add does not fuse with these operands");
  EXPECT_EQ(error("%0 = input : f32[q]\n"), "region line 1: bad type");
}

// A region of types only (the recorder's) types what a kernel does not
// compute: a reduction or softmax along a leading axis, integer floor
// division and modulo, a float op on an int tensor, an integer matmul. It
// still refuses what the interpreter raises on (an axis out of range,
// shapes that do not broadcast), and it reads back from text as such.
TEST(Region, TypesOnlyTypesWhatAKernelDoesNotCompute) {
  auto build = [](bool types_only) {
    Region r;
    r.types_only = types_only;
    const int x = r.add_tensor_input(DType::F32, {r.new_symbol(6), r.new_symbol(4)});
    const int k = r.add_tensor_input(DType::I64, {r.new_symbol(4)});
    const int two = r.add_scalar_input(ScalarKind::Int);
    RegionAttrs col;
    col.axis = 0;
    std::vector<std::optional<int>> v = {r.add(OpId::Sum, {x}, col), r.add(OpId::FloorDiv, {k, two}),
                                         r.add(OpId::Mod, {k, two}), r.add(OpId::Exp, {k})};
    col.keepdim = true;
    v.push_back(r.add(OpId::ArgMax, {x}, col));
    v.push_back(r.add(OpId::Softmax, {x}, col));
    v.push_back(r.add(OpId::MatMul, {k, k}));
    return std::pair(r, v);
  };
  const auto [kernel, refused] = build(false);
  for (const std::optional<int>& v : refused) EXPECT_EQ(v, std::nullopt);
  const auto [typed, values] = build(true);
  for (const std::optional<int>& v : values) EXPECT_TRUE(v.has_value());
  const std::string text =
      "%0 = input : f32[s0, s1]\n%1 = input : i64[s2]\n%2 = input : int\n%3 = sum(%0, axis=0) : f32[s1]\n"
      "%4 = floordiv(%1, %2) : i64[s2]\n%5 = mod(%1, %2) : i64[s2]\n%6 = exp(%1) : f32[s2]\n"
      "%7 = argmax(%0, axis=0, keepdim) : i64[1, s1]\n%8 = softmax(%0, axis=0) : f32[s0, s1]\n"
      "%9 = matmul(%1, %1) : i64[]\noutputs\n";
  EXPECT_EQ(typed.str(), text);
  EXPECT_EQ(parse_region(text, true).str(), text);
  EXPECT_THROW(parse_region(text), std::invalid_argument);  // no kernel computes it
  Region r = typed;
  RegionAttrs bad;
  bad.axis = 2;
  EXPECT_EQ(r.add(OpId::Sum, {0}, bad), std::nullopt);  // the interpreter raises: no axis 2
  const int y = r.add_tensor_input(DType::F32, {r.new_symbol(5)});
  EXPECT_EQ(r.add(OpId::Add, {0, y}), std::nullopt);  // 4 and 5 do not broadcast
  EXPECT_EQ(r.str(), text.substr(0, text.size() - 8) + "%10 = input : f32[s3]\noutputs\n");
}

// transpose is typed with its axes as constants (negative ones counted
// from the end, out of range refused as the interpreter raises); no kernel
// computes it.
TEST(Region, TypesOnlyTransposeSwapsItsAxes) {
  Region r;
  r.types_only = true;
  const int x = r.add_tensor_input(DType::BF16, {r.new_symbol(2), kDimOne, r.new_symbol(5)});
  RegionAttrs a;
  a.axes = {0, -1};
  ASSERT_TRUE(r.add(OpId::Transpose, {x}, a));
  a.axes = {1, 3};
  EXPECT_EQ(r.add(OpId::Transpose, {x}, a), std::nullopt);
  const std::string text = "%0 = input : bf16[s0, 1, s1]\n%1 = transpose(%0, dim0=0, dim1=2) : bf16[s1, 1, s0]\noutputs\n";
  EXPECT_EQ(r.str(), text);
  EXPECT_EQ(parse_region(text, true).str(), text);
  Region k = parse_region("%0 = input : f32[s0, s1]\noutputs\n");
  a.axes = {0, 1};
  EXPECT_EQ(k.add(OpId::Transpose, {0}, a), std::nullopt);
}

// The operations whose shapes come from values: a shape operand's elements
// are the dims (its -1 a new symbol), permute's order and slice's axis are
// attributes, slice's axis dim, arange's length and concat's axis dim are
// new symbols (their sizes are the recorder's to read off the result);
// concat's other dims are one symbol. The text form names the new symbols
// and reads them back.
TEST(Region, TypesOnlyShapesFromValues) {
  const std::string text =
      "%0 = input : f32[s0, s1]\n"
      "%1 = input : shape[s1, -1]\n"
      "%2 = reshape(%0, %1) : f32[s1, s2]\n"
      "%3 = permute(%2, dim0=1, dim1=0) : f32[s2, s1]\n"
      "%4 = slice(%3, axis=1) : f32[s2, s3]\n"
      "%5 = input : int\n"
      "%6 = arange(%5) : i64[s4]\n"
      "%7 = input : shape[s0, 1]\n"
      "%8 = full(%7, %5, bf16) : bf16[s0, 1]\n"
      "%9 = concat(%4, %4, axis=0) : f32[s5, s3]\n"
      "%10 = all_reduce(%8) : bf16[s0, 1]\n"
      "%11 = input : float\n"
      "%12 = input : int\n"
      "%13 = arange(%5, %11, %12, step) : f32[s6]\n"
      "outputs\n";
  const Region p = parse_region(text, true);
  EXPECT_EQ(p.str(), text);
  EXPECT_EQ(p.num_symbols, 7);

  Region r;
  r.types_only = true;
  const int n = r.new_symbol(3);
  const int x = r.add_tensor_input(DType::F32, {n, r.new_symbol(4)});
  RegionAttrs a;
  a.cast_to = DType::F32;
  const int inferring = r.add_shape_input({n, kDimInfer});
  EXPECT_EQ(r.add(OpId::Zeros, {inferring}, a), std::nullopt);  // zeros takes no -1
  const int sh = r.add_shape_input({n});
  a.cast_to = DType::I64;
  EXPECT_EQ(r.add(OpId::Randn, {sh}, a), std::nullopt);  // the interpreter raises: not a float dtype
  ASSERT_TRUE(r.add(OpId::Zeros, {sh}, a));
  EXPECT_EQ(region_type_str(r.type(r.num_values() - 1)), "i64[s0]");
  EXPECT_EQ(r.add(OpId::Add, {x, sh}), std::nullopt);  // a shape is no operand of arithmetic
  RegionAttrs perm;
  perm.axes = {1, 1};
  EXPECT_EQ(r.add(OpId::Permute, {x}, perm), std::nullopt);  // not a permutation
  perm.axes = {-1, 0};
  ASSERT_TRUE(r.add(OpId::Permute, {x}, perm));
  EXPECT_EQ(region_type_str(r.type(r.num_values() - 1)), "f32[s1, s0]");
  const int y = r.add_tensor_input(DType::F32, {r.new_symbol(3)});
  RegionAttrs cat;
  cat.axis = 0;
  EXPECT_EQ(r.add(OpId::Concat, {x, y}, cat), std::nullopt);  // ranks differ
  // A region a kernel computes takes no shape.
  Region k;
  const int ksh = k.add_shape_input({k.new_symbol(2)});
  EXPECT_EQ(k.add(OpId::Zeros, {ksh}, a), std::nullopt);
}

TEST(Region, BindSymbolsAndTheReferenceRun) {
  const Region r = sample();
  Value x = make_tensor(DType::F16, {2, 3});
  for (int64_t i = 0; i < 6; ++i) x.as_tensor()->set_f(i, 0.5 * static_cast<double>(i));
  Value row = make_tensor(DType::F32, {3});
  for (int64_t i = 0; i < 3; ++i) row.as_tensor()->set_f(i, 1.0);
  const std::vector<Value> in = {x, Value::number(2.0), row};
  auto sym = bind_symbols(r, in);
  ASSERT_TRUE(sym.has_value());
  EXPECT_EQ(*sym, (std::vector<int64_t>{2, 3}));
  std::vector<Value> out = run_region_reference(r, in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].as_tensor()->get_f(5), 6.0);  // 2.5 * 2 + 1
  EXPECT_EQ(out[1].as_tensor()->get_i(0), 0);    // 0 * 2 + 1 > 1: no
  EXPECT_EQ(out[1].as_tensor()->get_i(1), 1);    // 0.5 * 2 + 1 > 1: yes
  EXPECT_FALSE(bind_symbols(r, std::vector<Value>{x, Value::integer(2), row}));  // int for a float
  EXPECT_FALSE(bind_symbols(r, std::vector<Value>{x, Value::number(2.0), make_tensor(DType::F32, {4})}));
}

// Grouped-query attention: q's head dim keeps a symbol of its own (6 heads
// against k's and v's 2, which become one); the result has q's heads; the
// text form reads back without sizes; bind_symbols takes the sizes for
// which the interpreter groups or plainly broadcasts the heads.
TEST(Region, GroupedQueryAttentionKeepsQsHeads) {
  Region r;
  const int q = r.add_tensor_input(DType::F32, {r.new_symbol(6), r.new_symbol(8), r.new_symbol(16)});
  const int k = r.add_tensor_input(DType::F32, {r.new_symbol(3), r.new_symbol(2), r.new_symbol(8), r.new_symbol(16)});
  const int v = r.add_tensor_input(DType::F32, {r.new_symbol(3), r.new_symbol(2), r.new_symbol(8), r.new_symbol(16)});
  const std::optional<int> o = r.add(OpId::Attention, {q, k, v}, RegionAttrs{});
  ASSERT_TRUE(o.has_value());
  r.outputs = {*o};
  r.compact_symbols();
  EXPECT_EQ(r.str(),
            "%0 = input : f32[s0, s1, s2]\n%1 = input : f32[s3, s4, s5, s2]\n%2 = input : f32[s3, s4, s5, s6]\n"
            "%3 = attention(%0, %1, %2) : f32[s3, s0, s1, s6]\noutputs %3\n");
  EXPECT_EQ(attention_group_heads(r, r.ops[0]), std::make_pair(0, 4));
  EXPECT_EQ(parse_region(r.str()).str(), r.str());
  const auto bind = [&](int64_t hq, int64_t hkv) {
    return bind_symbols(r, std::vector<Value>{make_tensor(DType::F32, {hq, 8, 16}), make_tensor(DType::F32, {3, hkv, 8, 16}),
                                              make_tensor(DType::F32, {3, hkv, 8, 16})})
        .has_value();
  };
  EXPECT_TRUE(bind(6, 2));
  EXPECT_TRUE(bind(8, 4));
  EXPECT_TRUE(bind(4, 4));   // plain attention
  EXPECT_FALSE(bind(6, 4));  // the interpreter raises
  EXPECT_FALSE(bind(2, 4));
  // Plain attention's heads are one symbol: not grouped.
  Region p;
  const int pq = p.add_tensor_input(DType::F32, {p.new_symbol(4), p.new_symbol(8), p.new_symbol(16)});
  const int pk = p.add_tensor_input(DType::F32, {p.new_symbol(4), p.new_symbol(8), p.new_symbol(16)});
  p.add(OpId::Attention, {pq, pk, pk}, RegionAttrs{});
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(attention_group_heads(p, p.ops[0]), std::nullopt);
}

TEST(Region, AttentionHeadsThatDoNotGroupDoNotFuse) {
  Region r;
  const int q = r.add_tensor_input(DType::F32, {r.new_symbol(6), r.new_symbol(8), r.new_symbol(16)});
  const int k = r.add_tensor_input(DType::F32, {r.new_symbol(4), r.new_symbol(8), r.new_symbol(16)});
  const int k2 = r.add_tensor_input(DType::F32, {r.new_symbol(2), r.new_symbol(8), r.new_symbol(16)});
  const int v4 = r.add_tensor_input(DType::F32, {r.new_symbol(4), r.new_symbol(8), r.new_symbol(16)});
  const std::string before = r.str();
  EXPECT_EQ(r.add(OpId::Attention, {q, k, k}, RegionAttrs{}), std::nullopt);    // 6 heads over 4
  EXPECT_EQ(r.add(OpId::Attention, {k, k2, v4}, RegionAttrs{}), std::nullopt);  // k's 2 heads, v's 4
  EXPECT_EQ(r.str(), before);
}

}  // namespace
}  // namespace tessera
