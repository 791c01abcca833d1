// tessera.hpp: a thin C++ layer over the C ABI (tessera.h). RAII for the VM
// and for value handles; errors as tessera::Error exceptions carrying the
// status, the message and (for a script's runtime error) the traceback.
// Header-only: it does nothing the C ABI cannot do, so it needs no C++ ABI
// of the library's. docs/embedding.md is the guide.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/tessera.h"

namespace tessera {

class Error : public std::runtime_error {
 public:
  Error(tsr_status status, const std::string& message, std::string traceback = {})
      : std::runtime_error(message), status_(status), traceback_(std::move(traceback)) {}
  tsr_status status() const { return status_; }
  // "  at f (file.tsb:3)" lines, innermost last; empty unless a runtime error.
  const std::string& traceback() const { return traceback_; }

 private:
  tsr_status status_;
  std::string traceback_;
};

namespace detail {
inline void check(const tsr_vm* vm, tsr_status s) {
  if (s != TSR_SUCCESS) throw Error(s, tsr_last_error(vm), tsr_last_traceback(vm));
}
}  // namespace detail

class Tensor;

// Owns one handle (copying makes another handle to the same value).
class Value {
 public:
  Value() = default;
  // Takes over handle `h` of `vm`.
  Value(tsr_vm* vm, tsr_value h) : vm_(vm), h_(h) {}
  Value(const Value& o) : vm_(o.vm_) {
    if (o.h_.id) detail::check(vm_, tsr_value_dup(vm_, o.h_, &h_));
  }
  Value(Value&& o) noexcept : vm_(o.vm_), h_(o.h_) { o.h_.id = 0; }
  Value& operator=(Value o) noexcept {
    std::swap(vm_, o.vm_);
    std::swap(h_, o.h_);
    return *this;
  }
  ~Value() {
    if (h_.id) tsr_value_free(vm_, h_);
  }

  tsr_value handle() const { return h_; }
  tsr_vm* vm() const { return vm_; }
  bool valid() const { return h_.id != 0; }
  // Gives the handle up (the caller frees it, or hands it to the VM).
  tsr_value release() {
    tsr_value h = h_;
    h_.id = 0;
    return h;
  }

  tsr_type type() const {
    tsr_type t;
    detail::check(vm_, tsr_value_type(vm_, h_, &t));
    return t;
  }
  bool is_nil() const { return type() == TSR_TYPE_NIL; }
  bool as_bool() const {
    int b;
    detail::check(vm_, tsr_get_bool(vm_, h_, &b));
    return b != 0;
  }
  int64_t as_int() const {
    int64_t i;
    detail::check(vm_, tsr_get_int(vm_, h_, &i));
    return i;
  }
  double as_float() const {
    double f;
    detail::check(vm_, tsr_get_float(vm_, h_, &f));
    return f;
  }
  std::string as_str() const {
    const char* d;
    size_t n;
    detail::check(vm_, tsr_get_str(vm_, h_, &d, &n));
    return std::string(d, n);
  }
  // As print() writes it.
  std::string to_string() const {
    tsr_value s;
    detail::check(vm_, tsr_value_to_str(vm_, h_, &s));
    return Value(vm_, s).as_str();
  }
  // A list's length, and its items.
  size_t size() const {
    size_t n;
    detail::check(vm_, tsr_list_len(vm_, h_, &n));
    return n;
  }
  Value operator[](size_t i) const {
    tsr_value v;
    detail::check(vm_, tsr_list_get(vm_, h_, i, &v));
    return Value(vm_, v);
  }
  void push(const Value& item) { detail::check(vm_, tsr_list_push(vm_, h_, item.h_)); }
  inline Tensor as_tensor() const;

 protected:
  tsr_vm* vm_ = nullptr;
  tsr_value h_{0};
};

class Tensor : public Value {
 public:
  Tensor() = default;
  explicit Tensor(Value v) : Value(std::move(v)) { dtype(); }  // throws TSR_ETYPE unless a tensor
  tsr_dtype dtype() const {
    tsr_dtype d;
    detail::check(vm_, tsr_tensor_info(vm_, h_, &d, nullptr, nullptr));
    return d;
  }
  std::vector<int64_t> shape() const {
    int64_t s[8];
    size_t rank;
    detail::check(vm_, tsr_tensor_info(vm_, h_, nullptr, &rank, s));
    return std::vector<int64_t>(s, s + rank);
  }
  // The elements (no copy); valid while this handle is and no script runs.
  template <class T>
  T* data() const {
    void* d;
    detail::check(vm_, tsr_tensor_data(vm_, h_, &d, nullptr));
    return static_cast<T*>(d);
  }
  size_t nbytes() const {
    void* d;
    size_t n;
    detail::check(vm_, tsr_tensor_data(vm_, h_, &d, &n));
    return n;
  }
};

inline Tensor Value::as_tensor() const { return Tensor(*this); }

struct Options {
  bool jit = true;
  std::string device = "auto";
  std::vector<std::string> jit_params;  // "NAME=VALUE"
  int max_depth = 0;                    // 0: 10000
  std::function<void(std::string_view)> out;  // print(); empty: stdout
  std::function<void(std::string_view)> err;  // error reports; empty: none
};

// A VM. Neither copied nor moved: host functions point back at it.
class VM {
 public:
  using HostFunction = std::function<Value(VM&, std::span<const Value>)>;

  VM() : VM(Options{}) {}
  explicit VM(const Options& opts) : state_(std::make_unique<State>()) {
    state_->out = opts.out;
    state_->err = opts.err;
    tsr_vm_options o;
    tsr_vm_options_init(&o);
    o.jit = opts.jit ? 1 : 0;
    o.device = opts.device.c_str();
    o.max_depth = opts.max_depth;
    std::vector<const char*> params;
    for (const std::string& p : opts.jit_params) params.push_back(p.c_str());
    o.jit_params = params.data();
    o.n_jit_params = params.size();
    if (state_->out) {
      o.out = &write_to;
      o.out_user = &state_->out;
    }
    if (state_->err) {
      o.err = &write_to;
      o.err_user = &state_->err;
    }
    detail::check(nullptr, tsr_vm_create(&o, &vm_));
  }
  ~VM() { tsr_vm_destroy(vm_); }
  VM(const VM&) = delete;
  VM& operator=(const VM&) = delete;

  tsr_vm* get() const { return vm_; }

  void run(std::string_view source, const std::string& name = "<string>") {
    detail::check(vm_, tsr_run_source(vm_, name.c_str(), source.data(), source.size()));
  }
  void run_file(const std::string& path) { detail::check(vm_, tsr_run_file(vm_, path.c_str())); }

  Value global(const std::string& name) {
    tsr_value v;
    detail::check(vm_, tsr_get_global(vm_, name.c_str(), &v));
    return Value(vm_, v);
  }
  void set_global(const std::string& name, const Value& v) {
    detail::check(vm_, tsr_set_global(vm_, name.c_str(), v.handle()));
  }

  Value call(const Value& fn, std::span<const Value> args) {
    constexpr size_t kInline = 8;
    tsr_value inline_handles[kInline];
    std::vector<tsr_value> many;
    tsr_value* h = inline_handles;
    if (args.size() > kInline) {
      many.resize(args.size());
      h = many.data();
    }
    for (size_t i = 0; i < args.size(); ++i) h[i] = args[i].handle();
    tsr_value r;
    detail::check(vm_, tsr_call(vm_, fn.handle(), h, args.size(), &r));
    return Value(vm_, r);
  }
  // Each argument goes through value(): ints, floats, bools, strings,
  // nullptr, Values and Tensors.
  template <class... A>
  Value call(const std::string& name, const A&... args) {
    Value values[sizeof...(A) + 1] = {value(args)...};
    return call(global(name), std::span<const Value>(values, sizeof...(A)));
  }

  // A value of this VM from a C++ value.
  template <class T>
  Value value(const T& x) {
    tsr_value v;
    if constexpr (std::is_base_of_v<Value, T>) {
      return Value(x);
    } else if constexpr (std::is_same_v<T, bool>) {
      detail::check(vm_, tsr_new_bool(vm_, x ? 1 : 0, &v));
    } else if constexpr (std::is_integral_v<T>) {
      detail::check(vm_, tsr_new_int(vm_, static_cast<int64_t>(x), &v));
    } else if constexpr (std::is_floating_point_v<T>) {
      detail::check(vm_, tsr_new_float(vm_, static_cast<double>(x), &v));
    } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
      detail::check(vm_, tsr_new_nil(vm_, &v));
    } else {
      const std::string_view s(x);
      detail::check(vm_, tsr_new_str(vm_, s.data(), s.size(), &v));
    }
    return Value(vm_, v);
  }
  Value nil() { return value(nullptr); }
  Value list(std::span<const Value> items) {
    std::vector<tsr_value> h;
    for (const Value& i : items) h.push_back(i.handle());
    tsr_value v;
    detail::check(vm_, tsr_new_list(vm_, h.data(), h.size(), &v));
    return Value(vm_, v);
  }

  // A zero-filled tensor the VM owns.
  Tensor tensor(tsr_dtype dtype, std::span<const int64_t> shape) {
    tsr_value v;
    detail::check(vm_, tsr_new_tensor(vm_, dtype, shape.data(), shape.size(), &v));
    return Tensor(Value(vm_, v));
  }
  // A tensor over host memory the host keeps alive while the VM may use it
  // (no copy; the script's writes land in `data`).
  Tensor wrap(float* data, std::span<const int64_t> shape) { return wrap_as(TSR_F32, data, shape); }
  Tensor wrap(int32_t* data, std::span<const int64_t> shape) { return wrap_as(TSR_I32, data, shape); }
  Tensor wrap(int64_t* data, std::span<const int64_t> shape) { return wrap_as(TSR_I64, data, shape); }

  // A host function callable from scripts as `name`. A thrown exception
  // becomes the script's runtime error, with its what() as the message.
  void register_function(const std::string& name, HostFunction fn, int min_args = 0, int max_args = -1) {
    auto& b = state_->functions.emplace_back(Binding{this, std::move(fn)});
    detail::check(vm_, tsr_register_function(vm_, name.c_str(), &call_host, &b, min_args, max_args));
  }

  void set_jit_param(const std::string& name, const std::string& value) {
    detail::check(vm_, tsr_set_jit_param(vm_, name.c_str(), value.c_str()));
  }
  void enable_dump(const std::string& dir) { detail::check(vm_, tsr_enable_dump(vm_, dir.c_str())); }
  std::string stats(bool json = false) {
    tsr_value v;
    detail::check(vm_, tsr_stats(vm_, json ? TSR_STATS_JSON : TSR_STATS_TEXT, &v));
    return Value(vm_, v).as_str();
  }
  int64_t stat(const std::string& name) {
    int64_t n;
    detail::check(vm_, tsr_stat(vm_, name.c_str(), &n));
    return n;
  }

 private:
  struct Binding {
    VM* vm;
    HostFunction fn;
  };
  // Lives at one address for the VM's life: the C ABI holds pointers into it.
  struct State {
    std::function<void(std::string_view)> out, err;
    std::list<Binding> functions;
  };

  Tensor wrap_as(tsr_dtype dtype, void* data, std::span<const int64_t> shape) {
    tsr_value v;
    detail::check(vm_, tsr_wrap_tensor(vm_, dtype, shape.data(), shape.size(), data, nullptr, nullptr, &v));
    return Tensor(Value(vm_, v));
  }

  static void write_to(void* user, const char* data, size_t len) {
    (*static_cast<std::function<void(std::string_view)>*>(user))(std::string_view(data, len));
  }

  static tsr_status call_host(tsr_vm* vm, void* user, const tsr_value* args, size_t n, tsr_value* result) {
    auto& b = *static_cast<Binding*>(user);
    try {
      // The arguments are the VM's: each Value here is another handle.
      std::vector<Value> values;
      values.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        tsr_value h;
        detail::check(vm, tsr_value_dup(vm, args[i], &h));
        values.emplace_back(vm, h);
      }
      Value r = b.fn(*b.vm, values);
      if (r.valid()) *result = r.release();
      return TSR_SUCCESS;
    } catch (const std::exception& e) {
      return tsr_raise(vm, e.what());
    } catch (...) {
      return tsr_raise(vm, "unknown C++ exception");
    }
  }

  std::unique_ptr<State> state_;
  tsr_vm* vm_ = nullptr;
};

}  // namespace tessera
