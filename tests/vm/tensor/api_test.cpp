#include <set>

#include "test_util.h"

namespace tessera {
namespace {

using namespace testing;

TEST(Creation, ZerosOnesFullArange) {
  Value z = call("zeros", {ilist({2, 3})});
  EXPECT_EQ(tensor_of(z).dtype, DType::F32);
  EXPECT_EQ(vals(z), std::vector<double>(6, 0.0));
  Value o = call("ones", {ilist({2})}, {{"dtype", Value::dtype(DType::BF16)}});
  EXPECT_EQ(tensor_of(o).dtype, DType::BF16);
  EXPECT_EQ(vals(o), (std::vector<double>{1, 1}));
  Value f = call("full", {ilist({2}), Value::number(2.5)}, {{"dtype", Value::dtype(DType::I32)}});
  EXPECT_EQ(vals(f), (std::vector<double>{2, 2}));
  EXPECT_EQ(tensor_of(call("full", {ilist({}), Value::integer(7)})).dtype, DType::F32);
  Value a = call("arange", {Value::integer(1), Value::integer(10), Value::integer(3)});
  EXPECT_EQ(tensor_of(a).dtype, DType::I64);
  EXPECT_EQ(vals(a), (std::vector<double>{1, 4, 7}));
  Value af = call("arange", {Value::number(0.0), Value::integer(1)}, {{"step", Value::number(0.25)}});
  EXPECT_EQ(tensor_of(af).dtype, DType::F32);
  EXPECT_EQ(vals(af), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(vals(call("arange", {Value::integer(5), Value::integer(0), Value::integer(-2)})),
            (std::vector<double>{5, 3, 1}));
  EXPECT_EQ(tensor_of(call("arange", {Value::integer(3)}, {{"dtype", Value::dtype(DType::F16)}})).dtype, DType::F16);
  EXPECT_EQ(error_of([] { call("arange", {Value::integer(0), Value::integer(3), Value::integer(0)}); }),
            "arange: step must not be zero");
}

TEST(Creation, ShapeErrorsAndLimits) {
  EXPECT_EQ(error_of([] { call("zeros", {ilist({2, -1})}); }), "zeros: shape must be a list of non-negative ints");
  EXPECT_EQ(error_of([] { call("zeros", {Value::integer(3)}); }), "zeros: shape must be a list of non-negative ints");
  EXPECT_EQ(error_of([] { call("zeros", {ilist({1, 1, 1, 1, 1, 1, 1, 1, 1})}); }), "zeros: rank must be at most 8, got 9");
  EXPECT_EQ(error_of([] { call("zeros", {ilist({1 << 30, 1 << 30, 1 << 30})}); }), "tensor too large");
  EXPECT_EQ(error_of([] { call("zeros", {ilist({INT64_MAX, INT64_MAX, 0})}); }), "tensor too large");
  EXPECT_EQ(error_of([] { call("zeros", {ilist({2})}, {{"foo", Value::integer(1)}}); }),
            "zeros: unexpected keyword argument 'foo'");
  EXPECT_EQ(error_of([] { call("zeros", {ilist({2})}, {{"dtype", Value::integer(1)}}); }),
            "zeros: dtype must be a dtype, got int");
  EXPECT_EQ(error_of([] { call("zeros", {}); }), "zeros() takes 1 to 2 arguments (0 given)");
  EXPECT_EQ(error_of([] { call("world_size", {Value::integer(1)}); }), "world_size() takes 0 arguments (1 given)");
  EXPECT_EQ(error_of([] { call("sum", {make_t({1}, {1}), Value::nil()}, {{"axis", Value::integer(0)}}); }),
            "sum: got multiple values for argument 'axis'");
}

TEST(Creation, FromNestedList) {
  Value l = make_list({ilist({1, 2, 3}), ilist({4, 5, 6})});
  Value t = call("tensor", {l});
  EXPECT_EQ(tensor_of(t).shape, (Shape{2, 3}));
  EXPECT_EQ(tensor_of(t).dtype, DType::I64);
  Value mixed = call("tensor", {make_list({Value::integer(1), Value::number(2.5)})});
  EXPECT_EQ(tensor_of(mixed).dtype, DType::F32);
  Value b = call("tensor", {make_list({Value::boolean(true), Value::boolean(false)})});
  EXPECT_EQ(tensor_of(b).dtype, DType::Bool);
  Value e = call("tensor", {make_list({})});
  EXPECT_EQ(tensor_of(e).shape, (Shape{0}));
  EXPECT_EQ(tensor_of(e).dtype, DType::F32);
  Value h = call("tensor", {l}, {{"dtype", Value::dtype(DType::F16)}});
  EXPECT_EQ(tensor_of(h).dtype, DType::F16);
  EXPECT_EQ(vals(h), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Creation, NestedListErrors) {
  EXPECT_EQ(error_of([] { call("tensor", {make_list({ilist({1, 2}), ilist({3})})}); }), "tensor: ragged nested list");
  EXPECT_EQ(error_of([] { call("tensor", {make_list({ilist({1}), Value::integer(2)})}); }), "tensor: ragged nested list");
  EXPECT_EQ(error_of([] { call("tensor", {make_list({Value::integer(1), ilist({2})})}); }), "tensor: ragged nested list");
  EXPECT_EQ(error_of([] { call("tensor", {make_list({make_str("a")})}); }),
            "tensor: elements must be numbers or bools, got str");
  // A list that contains itself is refused by the rank limit, not followed forever.
  Value self = make_list({});
  self.as_list()->items.push_back(self);
  EXPECT_EQ(error_of([&] { call("tensor", {self}); }), "tensor: rank must be at most 8");
  self.as_list()->items.clear();  // break the cycle so the list is freed
}

TEST(Api, Queries) {
  Value t = make_t({1, 2, 3, 4, 5, 6}, {2, 3}, DType::I32);
  Value s = call("shape", {t});
  ASSERT_TRUE(s.is_list());
  EXPECT_EQ(s.as_list()->items.size(), 2u);
  EXPECT_EQ(s.as_list()->items[1].as_int(), 3);
  EXPECT_EQ(call("ndim", {t}).as_int(), 2);
  EXPECT_EQ(call("numel", {t}).as_int(), 6);
  EXPECT_EQ(call("dtype", {t}).as_dtype(), DType::I32);
  EXPECT_EQ(call("item", {make_t({2.5}, {1, 1})}).as_float(), 2.5);
  EXPECT_EQ(error_of([&] { call("item", {t}); }), "item: expected a tensor with one element, got 6 elements");
  EXPECT_EQ(error_of([] { call("ndim", {Value::integer(1)}); }), "ndim: expected tensor, got int");
  EXPECT_EQ(tensor_len(t), 2);
  EXPECT_EQ(error_of([] { tensor_len(make_t({1}, {})); }), "len() of a 0-d tensor");
}

TEST(Api, Indexing) {
  Value t = make_t({1, 2, 3, 4, 5, 6}, {2, 3}, DType::I64);
  Value idx[2] = {Value::integer(1), Value::integer(2)};
  Value v = tensor_get_index(t, idx, 2);
  EXPECT_TRUE(v.is_int());
  EXPECT_EQ(v.as_int(), 6);
  Value row = tensor_get_index(t, idx, 1);
  EXPECT_EQ(tensor_of(row).shape, (Shape{3}));
  EXPECT_EQ(vals(row), (std::vector<double>{4, 5, 6}));
  tensor_set_index(row, idx + 1, 1, Value::integer(0));  // the row is a copy
  EXPECT_EQ(tensor_get_index(t, idx, 2).as_int(), 6);
  tensor_set_index(t, idx, 2, Value::number(-2.9));  // truncates toward zero
  EXPECT_EQ(tensor_get_index(t, idx, 2).as_int(), -2);
  tensor_set_index(t, idx, 2, Value::boolean(true));
  EXPECT_EQ(tensor_get_index(t, idx, 2).as_int(), 1);
  Value bad[2] = {Value::integer(-1), Value::integer(0)};
  EXPECT_EQ(error_of([&] { tensor_get_index(t, bad, 2); }), "index out of range: -1 (axis 0 of length 2)");
  Value big[2] = {Value::integer(2), Value::integer(0)};
  EXPECT_EQ(error_of([&] { tensor_get_index(t, big, 2); }), "index out of range: 2 (axis 0 of length 2)");
  Value three[3] = {Value::integer(0), Value::integer(0), Value::integer(0)};
  EXPECT_EQ(error_of([&] { tensor_get_index(t, three, 3); }), "too many indices for tensor of rank 2: got 3");
  Value fl[1] = {Value::number(0.0)};
  EXPECT_EQ(error_of([&] { tensor_get_index(t, fl, 1); }), "tensor indices must be int, got float");
  EXPECT_EQ(error_of([&] { tensor_set_index(t, idx, 1, Value::integer(1)); }), "tensor store needs 2 indices, got 1");
  EXPECT_EQ(error_of([&] { tensor_set_index(t, idx, 2, Value::number(NAN)); }), "cannot store nan in an i64 tensor");
  Value f = make_t({0}, {1}, DType::F16);
  Value z[1] = {Value::integer(0)};
  tensor_set_index(f, z, 1, Value::number(0.1));
  EXPECT_TRUE(tensor_get_index(f, z, 0).is_tensor());  // zero indices: a copy of the whole tensor
  EXPECT_EQ(tensor_get_index(f, z, 1).as_float(), static_cast<double>(f16_to_f32(f32_to_f16(0.1f))));
  Value b = make_t({0}, {1}, DType::Bool);
  EXPECT_EQ(error_of([&] { tensor_set_index(b, z, 1, Value::integer(1)); }), "cannot store int in a bool tensor");
  tensor_set_index(b, z, 1, Value::boolean(true));
  EXPECT_TRUE(tensor_get_index(b, z, 1).as_bool());
}

TEST(Api, AllcloseAndDistributed) {
  Value a = make_t({1, 2, 3}, {3}), b = make_t({1, 2, 3.00001}, {3});
  EXPECT_TRUE(call("allclose", {a, b}).as_bool());
  EXPECT_FALSE(call("allclose", {a, make_t({1, 2, 3.1}, {3})}).as_bool());
  EXPECT_TRUE(call("allclose", {a, make_t({1, 2, 3.1}, {3})}, {{"atol", Value::number(0.2)}}).as_bool());
  EXPECT_TRUE(call("allclose", {make_t({2, 2}, {2, 1}), Value::integer(2)}).as_bool());
  EXPECT_FALSE(call("allclose", {make_t({NAN}, {1}), make_t({NAN}, {1})}).as_bool());
  EXPECT_EQ(error_of([&] { call("allclose", {a, make_t({1, 2}, {2})}); }),
            "allclose: shapes [3] and [2] are incompatible");
  EXPECT_EQ(call("world_size", {}).as_int(), 1);
  EXPECT_EQ(call("world_rank", {}).as_int(), 0);
  Value r = call("all_reduce", {a}, {{"op", make_str("max")}});
  EXPECT_NE(r.as_tensor(), a.as_tensor());
  EXPECT_EQ(vals(r), vals(a));
  EXPECT_EQ(vals(call("all_reduce", {a}, {{"op", make_str("prod")}})), vals(a));
  EXPECT_EQ(error_of([&] { call("all_reduce", {a}, {{"op", make_str("median")}}); }),
            "all_reduce: op must be \"sum\", \"prod\", \"max\", \"min\" or \"avg\", got \"median\"");
  // One rank: the collectives are copies, and send and recv have no peer.
  EXPECT_EQ(vals(call("all_gather", {a})), vals(a));
  EXPECT_EQ(vals(call("reduce_scatter", {a})), vals(a));
  EXPECT_EQ(vals(call("broadcast", {a})), vals(a));
  EXPECT_TRUE(call("barrier", {}).is_nil());
  EXPECT_EQ(error_of([&] { call("broadcast", {a}, {{"root", Value::integer(1)}}); }),
            "broadcast: root 1 is not a rank of a world of 1 rank (0)");
  EXPECT_EQ(error_of([&] { call("send", {a, Value::integer(1)}); }),
            "send: no peer: a run without mpirun is one rank (mpirun -np N starts N)");
  EXPECT_EQ(error_of([&] { call("recv", {a, Value::integer(0)}); }),
            "recv: no peer: a run without mpirun is one rank (mpirun -np N starts N)");
  EXPECT_EQ(error_of([&] { call("all_reduce", {make_t({1}, {1}, DType::Bool)}, {{"op", make_str("avg")}}); }),
            "all_reduce: op \"avg\" needs a number dtype, got bool");
}

TEST(Api, BuiltinTableCoversSection7) {
  std::set<std::string> names;
  for (const BuiltinDef& d : tensor_builtins()) names.insert(d.name);
  for (const char* n : {"zeros", "ones", "full", "arange", "tensor", "randn", "rand", "shape", "ndim", "numel",
                        "dtype", "item", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu",
                        "silu", "sin", "cos", "softplus", "erf", "min", "max", "where", "cast", "sum", "mean", "amax", "amin",
                        "argmax", "matmul", "softmax", "layer_norm", "rms_norm", "attention", "reshape",
                        "transpose", "permute", "concat", "slice", "allclose", "world_size", "world_rank",
                        "all_reduce", "all_gather", "reduce_scatter", "broadcast", "barrier", "send", "recv"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_FALSE(names.count("add"));  // operators are ops but not built-ins
  EXPECT_EQ(names.size(), 55u);
  for (const OpDef& d : op_table()) EXPECT_EQ(&op_def(d.id), &d);
}

TEST(Api, FreshTensorsAreFreed) {
  // 1 MiB per iteration; with prompt frees this stays flat (checked under ASan/LSan).
  for (int i = 0; i < 200; ++i) {
    Value t = call("zeros", {ilist({256, 1024})});
    Value u = tensor_binary(BinOp::Add, t, Value::integer(1));
    EXPECT_EQ(t.as_tensor()->refcount, 1u);
  }
}

}  // namespace
}  // namespace tessera
