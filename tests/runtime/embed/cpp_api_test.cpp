// The C++ header (include/tessera/tessera.hpp) over the C ABI: RAII values,
// conversions, calls, host functions that throw, and errors as exceptions.
#include <gtest/gtest.h>
#include <tessera/tessera.hpp>

#include <string>
#include <vector>

namespace {

TEST(CppApi, RunCallAndConvert) {
  std::string out;
  tessera::Options o;
  o.out = [&](std::string_view s) { out += s; };
  tessera::VM vm(o);
  vm.run("fn mix(a, b, c, d) { return [a, b, c, d] }\nprint(\"ready\")\n");
  EXPECT_EQ(out, "ready\n");
  tessera::Value r = vm.call("mix", 3, 2.5, "s", true);
  ASSERT_EQ(r.type(), TSR_TYPE_LIST);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].as_int(), 3);
  EXPECT_EQ(r[1].as_float(), 2.5);
  EXPECT_EQ(r[2].as_str(), "s");
  EXPECT_TRUE(r[3].as_bool());
  EXPECT_EQ(r.to_string(), "[3, 2.5, \"s\", true]");
  tessera::Value copy = r;  // another handle to the same list
  copy.push(vm.value(nullptr));
  EXPECT_EQ(r.size(), 5u);
  EXPECT_TRUE(r[4].is_nil());
  EXPECT_EQ(vm.stat("live_handles"), 2);  // r and copy; the temporaries are gone
}

TEST(CppApi, ErrorsAreExceptionsWithStatusAndTraceback) {
  tessera::VM vm;
  try {
    vm.run("fn f() { return 1 // 0 }\nf()\n", "e.tsb");
    FAIL() << "no exception";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.status(), TSR_ERUNTIME);
    EXPECT_STREQ(e.what(), "division by zero");
    EXPECT_EQ(e.traceback(), "  at <main> (e.tsb:2)\n  at f (e.tsb:1)\n");
  }
  EXPECT_THROW(vm.run("let = 1"), tessera::Error);
  EXPECT_THROW(vm.global("missing"), tessera::Error);
  EXPECT_THROW(vm.value(1).as_str(), tessera::Error);
  tessera::Options bad;
  bad.jit_params = {"nosuch=1"};
  try {
    tessera::VM never(bad);
    FAIL() << "no exception";
  } catch (const tessera::Error& e) {
    EXPECT_EQ(e.status(), TSR_EINVAL);
    EXPECT_NE(std::string(e.what()).find("nosuch"), std::string::npos);
  }
}

TEST(CppApi, HostFunctionsAndTheirExceptions) {
  tessera::VM vm;
  int calls = 0;
  vm.register_function("scale", [&](tessera::VM& v, std::span<const tessera::Value> args) {
    ++calls;
    if (args[1].as_float() < 0) throw std::invalid_argument("negative factor");
    return v.value(args[0].as_float() * args[1].as_float());
  }, 2, 2);
  vm.run("let y = scale(2, 1.5)\n");
  EXPECT_EQ(vm.global("y").as_float(), 3.0);
  try {
    vm.run("scale(1, -1.0)\n", "neg.tsb");
    FAIL() << "no exception";
  } catch (const tessera::Error& e) {
    EXPECT_STREQ(e.what(), "negative factor");
    EXPECT_EQ(e.traceback(), "  at <main> (neg.tsb:1)\n  at scale (host function)\n");
  }
  EXPECT_EQ(calls, 2);
}

TEST(CppApi, WrappedTensorsAreTheHostsMemory) {
  std::vector<float> host(12, 1.0f);
  tessera::VM vm;
  const int64_t shape[] = {3, 4};
  tessera::Tensor t = vm.wrap(host.data(), shape);
  EXPECT_EQ(t.data<float>(), host.data());
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(t.dtype(), TSR_F32);
  vm.run("fn bump(t) { t[2, 3] = 7.0\n return sum(t) }\n");
  tessera::Value s = vm.call("bump", t);
  EXPECT_EQ(host[11], 7.0f);
  EXPECT_EQ(vm.stat("tensor_bytes_copied"), 0);
  tessera::Tensor z = vm.tensor(TSR_I32, shape);
  EXPECT_EQ(z.nbytes(), 48u);
  EXPECT_THROW(tessera::Tensor(vm.value(1)), tessera::Error);
}

}  // namespace
