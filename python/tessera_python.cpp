// The Python module `tessera`: Tessera VM for Python hosts, written over the
// C ABI (tessera/tessera.h) alone, as any other embedder would.
//
// Threading: every call into the VM is made with the GIL held. That keeps
// the ABI's "one thread per VM at a time" rule without a lock of our own, and
// lets the callbacks (print output, host functions, DLPack deleters) touch
// Python objects; they still take the GIL (re-entrant) in case the library
// calls them from one of its own threads.
#include <dlpack/dlpack.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>
#include <tessera/tessera.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// Lists nest at most this deep either way (a list may contain itself).
constexpr int kMaxNesting = 1000;

// The exception classes (defined in Python in PYBIND11_MODULE); the module
// keeps them alive.
py::handle g_error, g_runtime_error, g_syntax_error;

[[noreturn]] void throw_py(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

[[noreturn]] void throw_tessera(py::handle cls, const std::string& status, const std::string& message,
                                const std::string& traceback = "", py::handle cause = py::handle()) {
  py::object exc = cls(message, status, traceback);
  if (cause && !cause.is_none()) exc.attr("__cause__") = cause;
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

const char* const kDtypeNames[] = {"f32", "f16", "bf16", "i32", "i64", "bool"};

const char* dtype_name(tsr_dtype d) {
  const auto i = static_cast<size_t>(d);
  return i < std::size(kDtypeNames) ? kDtypeNames[i] : "?";
}

std::string utf8_of(py::handle s) {
  Py_ssize_t n = 0;
  if (const char* p = PyUnicode_AsUTF8AndSize(s.ptr(), &n)) return std::string(p, static_cast<size_t>(n));
  // Script strings are bytes: a str decoded with surrogateescape goes back
  // to the bytes it came from.
  PyErr_Clear();
  py::object b = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(s.ptr(), "utf-8", "surrogateescape"));
  if (!b) throw py::error_already_set();
  return std::string(PyBytes_AS_STRING(b.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(b.ptr())));
}

// --- DLPack and buffer glue -------------------------------------------------

// An imported DLManagedTensor is wrapped so that its producer's deleter (NumPy
// 1.24's touches refcounts without taking the GIL) runs with the GIL, whichever
// thread the VM releases it on.
void gil_deleter(DLManagedTensor* self) {
  auto* original = static_cast<DLManagedTensor*>(self->manager_ctx);
  delete self;
  if (!original->deleter || !Py_IsInitialized()) return;  // at exit: leak rather than touch a dead interpreter
  PyGILState_STATE s = PyGILState_Ensure();
  original->deleter(original);
  PyGILState_Release(s);
}

// The exported capsule's destructor: a consumer renames the capsule to
// "used_dltensor" and calls the deleter itself; an unconsumed one is ours.
void dlpack_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"))) {
    if (mt->deleter) mt->deleter(mt);
  } else {
    PyErr_WriteUnraisable(capsule);
  }
  PyErr_Restore(type, value, tb);
}

void release_buffer(void* user) {
  auto* view = static_cast<Py_buffer*>(user);
  if (Py_IsInitialized()) {
    PyGILState_STATE s = PyGILState_Ensure();
    PyBuffer_Release(view);
    PyGILState_Release(s);
  }
  delete view;
}

// The Tessera dtype of a buffer's struct format ("?", "f", "<i", ...).
std::optional<tsr_dtype> dtype_of_format(const char* format, Py_ssize_t itemsize) {
  if (!format) format = "B";
  while (*format == '@' || *format == '=' || *format == '<') ++format;  // native/little-endian x86-64, ARM
  const std::string f = format;
  const bool integer = f == "i" || f == "l" || f == "q";
  if (f == "?") return TSR_BOOL;
  if (f == "f") return TSR_F32;
  if (f == "e") return TSR_F16;
  if (integer && (itemsize == 4 || itemsize == 8)) return itemsize == 4 ? TSR_I32 : TSR_I64;
  return std::nullopt;
}

// --- The VM wrapper ------------------------------------------------------------

class VM;

// Where print() output or error reports go: a Python callable, or (target
// None) whatever sys.stdout is at the time of the write, so that
// redirect_stdout and test capture see it.
struct Writer {
  VM* owner = nullptr;
  py::object target;
};

struct HostFn {
  VM* owner = nullptr;
  py::object fn;
};

// A tsr_value this module owns; freed unless released. Holds the wrapper,
// not the tsr_vm*, so a VM closed meanwhile is never touched.
class Handle {
 public:
  explicit Handle(VM* owner, tsr_value v = {0}) : owner_(owner), v_(v) {}
  Handle(Handle&& o) noexcept : owner_(o.owner_), v_(o.release()) {}
  Handle& operator=(Handle&&) = delete;
  ~Handle() { reset(); }
  tsr_value get() const { return v_; }
  tsr_value* out() { reset(); return &v_; }
  tsr_value release() { tsr_value v = v_; v_ = {0}; return v; }
  void reset();

 private:
  VM* owner_;
  tsr_value v_;
};

class VM : public std::enable_shared_from_this<VM> {
 public:
  VM(bool jit, const std::string& device, py::object jit_params, int max_depth, py::object out, py::object err) {
    out_.owner = err_.owner = this;
    std::vector<std::string> params;
    if (py::isinstance<py::dict>(jit_params)) {
      for (auto [k, v] : py::reinterpret_borrow<py::dict>(jit_params))
        params.push_back(py::str(k).cast<std::string>() + "=" + param_text(v));
    } else if (!jit_params.is_none()) {
      for (py::handle p : jit_params) params.push_back(py::str(p).cast<std::string>());
    }
    std::vector<const char*> param_ptrs;
    for (const auto& p : params) param_ptrs.push_back(p.c_str());

    tsr_vm_options opts;
    tsr_vm_options_init(&opts);
    opts.jit = jit ? 1 : 0;
    opts.device = device.c_str();
    opts.max_depth = max_depth;
    opts.jit_params = param_ptrs.data();
    opts.n_jit_params = param_ptrs.size();
    // stdout=None still installs a writer: the C default (the process's
    // stdout) would bypass sys.stdout.
    out_.target = writer_target(out, "stdout");
    opts.out = &write_trampoline;
    opts.out_user = &out_;
    if (!err.is_none()) {
      err_.target = writer_target(err, "stderr");
      opts.err = &write_trampoline;
      opts.err_user = &err_;
    }
    tsr_status st = tsr_vm_create(&opts, &vm_);
    if (st != TSR_SUCCESS) throw_tessera(g_error, tsr_status_name(st), tsr_last_error(nullptr));
  }

  ~VM() { destroy(); }

  tsr_vm* get() {
    if (!vm_) throw_tessera(g_error, "TSR_EINVAL", "the VM is closed");
    return vm_;
  }
  bool closed() const { return vm_ == nullptr; }

  void close() {
    if (running_ > 0) throw_tessera(g_error, "TSR_EBUSY", "the VM cannot be closed while it runs");
    destroy();
  }

  void free_value(tsr_value v) { if (vm_ && v.id) tsr_value_free(vm_, v); }

  // Raises the exception for a failed call. The message is read first: the
  // next call on the VM (even a tsr_value_free) replaces it.
  [[noreturn]] void raise_status(tsr_status st) {
    const std::string message = tsr_last_error(vm_);
    const std::string traceback = tsr_last_traceback(vm_);
    py::handle cls = st == TSR_ERUNTIME ? g_runtime_error : st == TSR_ESYNTAX ? g_syntax_error : g_error;
    throw_tessera(cls, tsr_status_name(st), message, traceback, st == TSR_ERUNTIME ? host_exc_ : py::handle());
  }
  void check(tsr_status st) { if (st != TSR_SUCCESS) raise_status(st); }

  // After a run or call: a Python exception that a callback could not raise
  // through the VM (KeyboardInterrupt in a host function, a failing stdout)
  // wins over the status.
  void finish(tsr_status st) {
    if (pending_) {
      py::error_already_set e = std::move(*pending_);
      pending_.reset();
      throw e;
    }
    check(st);
  }
  void stash(py::error_already_set&& e) { if (!pending_) pending_.emplace(std::move(e)); }

  // Marks a run or call in progress (close() refuses meanwhile).
  struct Running {
    explicit Running(VM& vm) : vm(vm) {
      if (vm.running_++ == 0) vm.host_exc_ = py::none();
    }
    ~Running() { --vm.running_; }
    VM& vm;
  };

  void run(py::handle source, const std::string& name) {
    const std::string text = PyBytes_Check(source.ptr()) ? source.cast<std::string>() : utf8_of(source);
    tsr_vm* vm = get();
    Running r(*this);
    finish(tsr_run_source(vm, name.c_str(), text.data(), text.size()));
  }

  void run_file(py::handle path) {
    const std::string p = py::str(py::module_::import("os").attr("fspath")(path)).cast<std::string>();
    tsr_vm* vm = get();
    Running r(*this);
    finish(tsr_run_file(vm, p.c_str()));
  }

  // Calls the global `name` (fn ignored) or the function value fn.
  py::object call(const char* name, tsr_value fn, py::args args) {
    std::vector<Handle> handles;
    std::vector<tsr_value> raw;
    handles.reserve(args.size());
    for (py::handle a : args) {
      handles.push_back(to_vm(a));
      raw.push_back(handles.back().get());
    }
    tsr_vm* vm = get();
    Handle result(this);
    tsr_status st;
    {
      Running r(*this);
      st = name ? tsr_call_global(vm, name, raw.data(), raw.size(), result.out())
                : tsr_call(vm, fn, raw.data(), raw.size(), result.out());
    }
    finish(st);
    return to_python(result.release(), true);
  }

  py::object get_global(const std::string& name, bool* found) {
    Handle h(this);
    tsr_status st = tsr_get_global(get(), name.c_str(), h.out());
    *found = st != TSR_ENOTFOUND;
    if (st == TSR_ENOTFOUND) return py::none();
    check(st);
    return to_python(h.release(), true);
  }

  void set_global(const std::string& name, py::handle value);

  void register_fn(const std::string& name, py::object fn, int min_args, int max_args) {
    if (!PyCallable_Check(fn.ptr())) throw_py(PyExc_TypeError, "register: the host function must be callable");
    tsr_vm* vm = get();
    auto hf = std::make_unique<HostFn>();
    hf->owner = this;
    hf->fn = std::move(fn);
    check(tsr_register_function(vm, name.c_str(), &host_trampoline, hf.get(), min_args, max_args));
    // Kept until the VM goes: a script may still hold the old function after
    // the name is registered again.
    host_fns_.push_back(std::move(hf));
  }

  void set_jit_param(const std::string& name, py::handle value) {
    check(tsr_set_jit_param(get(), name.c_str(), param_text(value).c_str()));
  }

  void enable_dump(py::handle dir) {
    const std::string d = py::str(py::module_::import("os").attr("fspath")(dir)).cast<std::string>();
    check(tsr_enable_dump(get(), d.c_str()));
  }

  py::object stats(bool json) {
    Handle h(this);
    check(tsr_stats(get(), json ? TSR_STATS_JSON : TSR_STATS_TEXT, h.out()));
    py::object text = to_python(h.release(), true);
    return json ? py::module_::import("json").attr("loads")(text) : text;
  }

  int64_t stat(const std::string& name) {
    int64_t v = 0;
    check(tsr_stat(get(), name.c_str(), &v));
    return v;
  }

  Handle to_vm(py::handle obj, int depth = 0);
  py::object to_python(tsr_value v, bool owned, int depth = 0);

 private:
  static std::string param_text(py::handle v) {
    if (PyBool_Check(v.ptr())) return v.ptr() == Py_True ? "1" : "0";
    return py::str(v).cast<std::string>();
  }

  static py::object writer_target(py::object w, const char* what) {
    if (w.is_none()) return w;
    if (py::hasattr(w, "write")) return w.attr("write");
    if (PyCallable_Check(w.ptr())) return w;
    throw_py(PyExc_TypeError, std::string(what) + " must be None, a callable taking a str, or an object with .write");
  }

  static void write_trampoline(void* user, const char* data, size_t len) {
    auto* w = static_cast<Writer*>(user);
    py::gil_scoped_acquire gil;
    if (w->owner->pending_) return;  // an earlier write failed: that error is raised after the call
    try {
      py::object text = py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(len), "replace"));
      if (!text) throw py::error_already_set();
      if (!w->target.is_none()) {
        w->target(text);
      } else {
        py::object out = py::module_::import("sys").attr("stdout");
        if (!out.is_none()) out.attr("write")(text);
      }
    } catch (py::error_already_set& e) {
      w->owner->stash(std::move(e));
    }
  }

  static tsr_status host_trampoline(tsr_vm* vm, void* user, const tsr_value* args, size_t nargs,
                                    tsr_value* result) {
    auto* hf = static_cast<HostFn*>(user);
    VM& self = *hf->owner;
    py::gil_scoped_acquire gil;
    try {
      py::tuple pargs(nargs);
      for (size_t i = 0; i < nargs; ++i) pargs[i] = self.to_python(args[i], false);
      py::object r = hf->fn(*pargs);
      *result = self.to_vm(r).release();
      return TSR_SUCCESS;
    } catch (py::error_already_set& e) {
      const std::string type = py::str(e.type().attr("__name__")).cast<std::string>();
      if (!e.matches(PyExc_Exception)) {
        // KeyboardInterrupt, SystemExit: end the script, then raise it as is.
        self.stash(std::move(e));
        return tsr_raise(vm, (type + " in a host function").c_str());
      }
      // Becomes the __cause__ of the tessera.RuntimeError the host gets.
      self.host_exc_ = e.value();
      std::string text = py::str(e.value()).cast<std::string>();
      return tsr_raise(vm, (text.empty() ? type : type + ": " + text).c_str());
    } catch (const std::exception& e) {
      return tsr_raise(vm, e.what());
    }
  }

  Handle tensor_from_dlpack(py::handle obj);
  Handle tensor_from_buffer(py::handle obj);

  void destroy() {
    if (vm_) tsr_vm_destroy(vm_);  // releases imported tensors: their deleters need the GIL we hold
    vm_ = nullptr;
    host_fns_.clear();
    out_.target = err_.target = py::none();  // drop references the callables may hold to us
  }

  tsr_vm* vm_ = nullptr;
  int running_ = 0;
  Writer out_, err_;
  std::vector<std::unique_ptr<HostFn>> host_fns_;
  std::optional<py::error_already_set> pending_;
  py::object host_exc_ = py::none();
};

void Handle::reset() {
  if (v_.id) owner_->free_value(v_);
  v_ = {0};
}

// --- Values the Python side holds ------------------------------------------------

// A VM value held by a Python object: tensors, functions, dtypes. The
// object keeps the VM alive; its handle is freed with it.
struct Ref {
  Ref(std::shared_ptr<VM> vm, tsr_value v) : vm(std::move(vm)), v(v) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  virtual ~Ref() { vm->free_value(v); }
  std::string to_str() {
    Handle h(vm.get());
    vm->check(tsr_value_to_str(vm->get(), v, h.out()));
    return vm->to_python(h.release(), true).cast<std::string>();
  }
  std::shared_ptr<VM> vm;
  tsr_value v;
};

struct Function : Ref {
  using Ref::Ref;
  py::object call(py::args args) { return vm->call(nullptr, v, std::move(args)); }
};

struct DType : Ref {
  DType(std::shared_ptr<VM> vm, tsr_value v) : Ref(std::move(vm), v), name(to_str()) {}
  std::string name;
};

struct Tensor : Ref {
  using Ref::Ref;

  tsr_dtype info(size_t* rank = nullptr, int64_t* dims = nullptr) {
    tsr_dtype dt;
    size_t r = 0;
    vm->check(tsr_tensor_info(vm->get(), v, &dt, rank ? rank : &r, dims));
    return dt;
  }
  py::tuple shape() {
    size_t rank = 0;
    int64_t dims[8];
    info(&rank, dims);
    py::tuple t(rank);
    for (size_t i = 0; i < rank; ++i) t[i] = py::int_(dims[i]);
    return t;
  }
  std::string dtype() { return dtype_name(info()); }

  py::object dlpack(py::object stream) {
    if (!stream.is_none()) throw_py(PyExc_BufferError, "a Tessera tensor is on the host: __dlpack__ takes no stream");
    DLManagedTensor* mt = nullptr;
    vm->check(tsr_tensor_to_dlpack(vm->get(), v, &mt));
    PyObject* capsule = PyCapsule_New(mt, "dltensor", &dlpack_capsule_destructor);
    if (!capsule) {
      mt->deleter(mt);
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(capsule);
  }

  // A writable NumPy array over the tensor's memory. Through
  // __array_interface__ rather than np.from_dlpack, whose arrays NumPy 1.24
  // makes read-only (and which has no bool).
  py::object numpy();
};

// A DLPack export that NumPy reads through __array_interface__; the array
// keeps it as its base, so the export (and the storage) lives as long as
// the array.
struct ArrayExport {
  ArrayExport(DLManagedTensor* mt, const char* typestr) : mt(mt), typestr(typestr) {}
  ArrayExport(const ArrayExport&) = delete;
  ~ArrayExport() { if (mt->deleter) mt->deleter(mt); }
  py::dict interface() const {
    const DLTensor& t = mt->dl_tensor;
    py::tuple shape(t.ndim), strides(t.ndim);
    const int64_t itemsize = t.dtype.bits / 8;
    for (int i = 0; i < t.ndim; ++i) {
      shape[i] = py::int_(t.shape[i]);
      if (t.strides) strides[i] = py::int_(t.strides[i] * itemsize);
    }
    py::dict d;
    const auto data = reinterpret_cast<uintptr_t>(static_cast<char*>(t.data) + t.byte_offset);
    d["data"] = py::make_tuple(data, false);  // false: writable
    d["shape"] = shape;
    d["strides"] = t.strides ? py::object(strides) : py::object(py::none());
    d["typestr"] = typestr;
    d["version"] = 3;
    return d;
  }
  DLManagedTensor* mt;
  const char* typestr;
};

py::object Tensor::numpy() {
  static const char* const kTypestr[] = {"<f4", "<f2", nullptr, "<i4", "<i8", "|b1"};  // by tsr_dtype
  const tsr_dtype dt = info();
  const char* typestr = static_cast<size_t>(dt) < std::size(kTypestr) ? kTypestr[dt] : nullptr;
  if (!typestr) throw_py(PyExc_TypeError, std::string("NumPy has no dtype for ") + dtype_name(dt) + " tensors: cast it in the script");
  DLManagedTensor* mt = nullptr;
  vm->check(tsr_tensor_to_dlpack(vm->get(), v, &mt));
  py::object holder = py::cast(new ArrayExport(mt, typestr), py::return_value_policy::take_ownership);
  return py::module_::import("numpy").attr("asarray")(holder);
}

// --- Conversions -------------------------------------------------------------------

Handle VM::to_vm(py::handle obj, int depth) {
  tsr_vm* vm = get();
  Handle h(this);
  PyObject* o = obj.ptr();
  if (obj.is_none()) {
    check(tsr_new_nil(vm, h.out()));
  } else if (PyBool_Check(o)) {  // before int: bool is an int subclass
    check(tsr_new_bool(vm, o == Py_True, h.out()));
  } else if (PyLong_Check(o)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) throw_py(PyExc_OverflowError, "int does not fit in a Tessera int (64-bit signed)");
    if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
    check(tsr_new_int(vm, i, h.out()));
  } else if (PyFloat_Check(o)) {
    check(tsr_new_float(vm, PyFloat_AS_DOUBLE(o), h.out()));
  } else if (PyUnicode_Check(o) || PyBytes_Check(o)) {
    const std::string s = PyBytes_Check(o) ? obj.cast<std::string>() : utf8_of(obj);
    check(tsr_new_str(vm, s.data(), s.size(), h.out()));
  } else if (PyList_Check(o) || PyTuple_Check(o)) {
    if (depth >= kMaxNesting) throw_py(PyExc_ValueError, "list nested too deeply (does it contain itself?)");
    std::vector<Handle> items;
    std::vector<tsr_value> raw;
    for (py::handle item : py::reinterpret_borrow<py::sequence>(obj)) {
      items.push_back(to_vm(item, depth + 1));
      raw.push_back(items.back().get());
    }
    check(tsr_new_list(get(), raw.data(), raw.size(), h.out()));
  } else if (py::isinstance<Ref>(obj) && obj.cast<Ref&>().vm.get() == this) {
    check(tsr_value_dup(vm, obj.cast<Ref&>().v, h.out()));
  } else if (py::isinstance<DType>(obj)) {  // another VM's: the same predefined global here
    check(tsr_get_global(vm, obj.cast<DType&>().name.c_str(), h.out()));
  } else if (py::isinstance<Function>(obj)) {
    throw_py(PyExc_TypeError, "a function of another VM cannot be passed to this one");
  } else if (py::hasattr(obj, "__dlpack__")) {  // NumPy, PyTorch, another VM's tensor...
    return tensor_from_dlpack(obj);
  } else {
    // NumPy scalars (they are read-only buffers too): np.bool_ has __index__
    // as well, so it is looked at first.
    py::object numpy = py::module_::import("sys").attr("modules").attr("get")("numpy");
    if (!numpy.is_none() && py::isinstance(obj, numpy.attr("bool_"))) {
      check(tsr_new_bool(vm, obj.cast<bool>(), h.out()));
    } else if (PyIndex_Check(o)) {
      return to_vm(py::reinterpret_steal<py::object>(PyNumber_Index(o)), depth);
    } else if (py::hasattr(obj, "__float__")) {
      const double f = PyFloat_AsDouble(o);
      if (f == -1.0 && PyErr_Occurred()) throw py::error_already_set();
      check(tsr_new_float(vm, f, h.out()));
    } else if (PyObject_CheckBuffer(o)) {  // array.array, memoryview
      return tensor_from_buffer(obj);
    } else {
      const std::string type = py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
      throw_py(PyExc_TypeError,
               "cannot pass a value of type '" + type + "' to Tessera" +
                   (PyCallable_Check(o) ? " (register a callable with vm.register(name, fn) or vm.globals[name] = fn)"
                                        : ""));
    }
  }
  return h;
}

Handle VM::tensor_from_dlpack(py::handle obj) {
  py::object capsule;
  try {
    capsule = obj.attr("__dlpack__")();
  } catch (py::error_already_set& e) {
    // NumPy 1.24 exports no bool arrays; its buffer protocol does.
    if (e.matches(PyExc_BufferError) && PyObject_CheckBuffer(obj.ptr())) return tensor_from_buffer(obj);
    throw;
  }
  auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!mt) throw py::error_already_set();
  const DLTensor& t = mt->dl_tensor;
  if (t.device.device_type != kDLCPU)
    throw_py(PyExc_TypeError, "only host (kDLCPU) tensors can be passed to Tessera, got DLPack device type " +
                                  std::to_string(t.device.device_type));
  if (t.dtype.code == kDLFloat && t.dtype.bits == 64)
    throw_py(PyExc_TypeError, "float64 arrays are not a Tessera dtype: use astype(np.float32)");
  auto* wrapper = new DLManagedTensor{t, mt, &gil_deleter};
  Handle h(this);
  const tsr_status st = tsr_tensor_from_dlpack(get(), wrapper, h.out());
  if (st != TSR_SUCCESS) {
    delete wrapper;  // the capsule still owns mt and frees it
    if (st == TSR_ETYPE) throw_py(PyExc_TypeError, std::string("cannot pass this array to Tessera: ") + tsr_last_error(vm_));
    raise_status(st);
  }
  // Ours now: the capsule's destructor must not free it (the DLPack protocol).
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  return h;
}

Handle VM::tensor_from_buffer(py::handle obj) {
  auto view = std::make_unique<Py_buffer>();
  if (PyObject_GetBuffer(obj.ptr(), view.get(), PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) != 0)
    throw py::error_already_set();  // read-only or not C-contiguous
  auto dt = dtype_of_format(view->format, view->itemsize);
  if (!dt || view->ndim > 8) {
    const std::string format = view->format ? view->format : "B";
    PyBuffer_Release(view.get());
    if (!dt) throw_py(PyExc_TypeError, "buffer format '" + format + "' is not a Tessera dtype");
    throw_py(PyExc_ValueError, "Tessera tensors have at most 8 dimensions");
  }
  std::vector<int64_t> shape(view->shape, view->shape + view->ndim);
  Handle h(this);
  const tsr_status st = tsr_wrap_tensor(get(), *dt, shape.data(), shape.size(), view->buf, &release_buffer,
                                        view.get(), h.out());
  if (st != TSR_SUCCESS) {
    const std::string message = tsr_last_error(vm_);
    PyBuffer_Release(view.get());
    throw_tessera(g_error, tsr_status_name(st), message);
  }
  view.release();  // release_buffer frees it
  return h;
}

py::object VM::to_python(tsr_value v, bool owned, int depth) {
  Handle guard(this, owned ? v : tsr_value{0});  // an owned handle is freed unless an object takes it
  tsr_vm* vm = get();
  tsr_type type;
  check(tsr_value_type(vm, v, &type));
  switch (type) {
    case TSR_TYPE_NIL:
      return py::none();
    case TSR_TYPE_BOOL: { int b = 0; check(tsr_get_bool(vm, v, &b)); return py::bool_(b != 0); }
    case TSR_TYPE_INT: { int64_t i = 0; check(tsr_get_int(vm, v, &i)); return py::int_(i); }
    case TSR_TYPE_FLOAT: { double f = 0; check(tsr_get_float(vm, v, &f)); return py::float_(f); }
    case TSR_TYPE_STR: {
      const char* data = nullptr;
      size_t len = 0;
      check(tsr_get_str(vm, v, &data, &len));
      // Script strings are bytes: surrogateescape keeps non-UTF-8 ones round-trippable.
      PyObject* s = PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(len), "surrogateescape");
      if (!s) throw py::error_already_set();
      return py::reinterpret_steal<py::object>(s);
    }
    case TSR_TYPE_LIST: {
      if (depth >= kMaxNesting) throw_py(PyExc_ValueError, "list nested too deeply (does it contain itself?)");
      size_t n = 0;
      check(tsr_list_len(vm, v, &n));
      py::list out(n);
      for (size_t i = 0; i < n; ++i) {
        tsr_value item{0};
        check(tsr_list_get(get(), v, i, &item));
        out[i] = to_python(item, true, depth + 1);
      }
      return out;
    }
    case TSR_TYPE_TENSOR:
    case TSR_TYPE_FUNCTION:
    case TSR_TYPE_DTYPE: {
      tsr_value mine{0};
      if (owned) mine = guard.release();
      else check(tsr_value_dup(vm, v, &mine));
      auto self = shared_from_this();
      if (type == TSR_TYPE_TENSOR) return py::cast(new Tensor(self, mine), py::return_value_policy::take_ownership);
      if (type == TSR_TYPE_FUNCTION) return py::cast(new Function(self, mine), py::return_value_policy::take_ownership);
      return py::cast(new DType(self, mine), py::return_value_policy::take_ownership);
    }
  }
  throw_tessera(g_error, "TSR_ETYPE", "a value of an unknown type (" + std::to_string(type) + ")");
}

void VM::set_global(const std::string& name, py::handle value) {
  if (PyCallable_Check(value.ptr()) && !py::isinstance<Ref>(value)) {
    register_fn(name, py::reinterpret_borrow<py::object>(value), 0, -1);
    return;
  }
  Handle h = to_vm(value);
  check(tsr_set_global(get(), name.c_str(), h.get()));
}

// vm.globals: the VM's global namespace as a mapping.
struct Globals {
  std::shared_ptr<VM> vm;
};

}  // namespace

PYBIND11_MODULE(tessera, m) {
  m.doc() = "Tessera VM: run Tessera Script from Python, with host functions and zero-copy NumPy tensors.";

  // The exceptions, in Python so they are ordinary classes with attributes.
  py::exec(R"(
import builtins as _builtins

class Error(Exception):
    """A failure reported by the Tessera VM: .status ("TSR_EINVAL", ...) and .message."""
    def __init__(self, message="", status="", traceback=""):
        super().__init__(message)
        self.message = message
        self.status = status
        self.traceback = traceback
    def __str__(self):
        return f"{self.status}: {self.message}" if self.status else self.message

class RuntimeError(Error, _builtins.RuntimeError):
    """The script raised a runtime error; .traceback lists its frames, innermost last."""
    def __str__(self):
        tb = self.traceback.rstrip("\n")
        return self.message + "\n" + tb if tb else self.message

class ScriptSyntaxError(Error):
    """The source does not compile; .message has the line and column."""
    def __str__(self):
        return self.message

SyntaxError = ScriptSyntaxError
del _builtins
)",
           m.attr("__dict__"));
  g_error = py::object(m.attr("Error")).release();
  g_runtime_error = py::object(m.attr("RuntimeError")).release();
  g_syntax_error = py::object(m.attr("ScriptSyntaxError")).release();

  m.attr("__version__") = tsr_version_string();
  m.def("abi_version", [] {
    const uint32_t v = tsr_abi_version();
    return py::make_tuple(v >> 16, v & 0xffff);
  }, "The library's ABI version as (major, minor).");

  py::class_<Ref>(m, "Value")
      .def("__repr__", &Ref::to_str)
      .def("__str__", &Ref::to_str);

  py::class_<Function, Ref>(m, "Function")
      .def("__call__", &Function::call);

  py::class_<DType, Ref>(m, "DType")
      .def_readonly("name", &DType::name)
      .def("__str__", [](DType& d) { return d.name; })
      .def("__eq__", [](DType& d, py::handle o) {
        if (py::isinstance<DType>(o)) return d.name == o.cast<DType&>().name;
        return py::isinstance<py::str>(o) && d.name == o.cast<std::string>();
      })
      .def("__hash__", [](DType& d) { return py::hash(py::str(d.name)); });

  py::class_<Tensor, Ref>(m, "Tensor")
      .def_property_readonly("shape", &Tensor::shape)
      .def_property_readonly("dtype", &Tensor::dtype)
      .def("__dlpack__", &Tensor::dlpack, py::arg("stream") = py::none())
      .def("__dlpack_device__", [](Tensor&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); })
      .def("numpy", &Tensor::numpy, "A writable NumPy array sharing the tensor's memory.")
      .def("__array__", [](Tensor& t, py::object dtype) {
        py::object a = t.numpy();
        return dtype.is_none() ? a : a.attr("astype")(dtype, py::arg("copy") = false);
      }, py::arg("dtype") = py::none());

  py::class_<ArrayExport>(m, "_ArrayExport")
      .def_property_readonly("__array_interface__", &ArrayExport::interface);

  py::class_<Globals>(m, "Globals")
      .def("__getitem__", [](Globals& g, const std::string& name) {
        bool found = false;
        py::object v = g.vm->get_global(name, &found);
        if (!found) throw py::key_error(name);
        return v;
      })
      .def("__setitem__", [](Globals& g, const std::string& name, py::handle v) { g.vm->set_global(name, v); })
      .def("__contains__", [](Globals& g, const std::string& name) {
        bool found = false;
        g.vm->get_global(name, &found);
        return found;
      })
      .def("get", [](Globals& g, const std::string& name, py::object dflt) {
        bool found = false;
        py::object v = g.vm->get_global(name, &found);
        return found ? v : dflt;
      }, py::arg("name"), py::arg("default") = py::none());

  py::class_<VM, std::shared_ptr<VM>>(m, "VM")
      .def(py::init<bool, const std::string&, py::object, int, py::object, py::object>(), py::arg("jit") = true,
           py::arg("device") = "auto", py::arg("jit_params") = py::none(), py::arg("max_depth") = 0,
           py::arg("stdout") = py::none(), py::arg("stderr") = py::none())
      .def("run", &VM::run, py::arg("source"), py::arg("name") = "<string>")
      .def("run_file", &VM::run_file, py::arg("path"))
      .def("call", [](VM& vm, py::handle target, py::args args) {
        if (py::isinstance<py::str>(target)) return vm.call(target.cast<std::string>().c_str(), {0}, std::move(args));
        if (py::isinstance<Function>(target) && target.cast<Function&>().vm.get() == &vm)
          return vm.call(nullptr, target.cast<Function&>().v, std::move(args));
        throw_py(PyExc_TypeError, "call: expected a global's name or a Function of this VM");
      }, py::arg("fn"))
      .def_property_readonly("globals", [](VM& vm) { return Globals{vm.shared_from_this()}; })
      .def("register", &VM::register_fn, py::arg("name"), py::arg("fn"), py::arg("min_args") = 0,
           py::arg("max_args") = -1)
      .def("set_jit_param", &VM::set_jit_param, py::arg("name"), py::arg("value"))
      .def("enable_dump", &VM::enable_dump, py::arg("dir"))
      .def("stats", &VM::stats, py::arg("json") = false)
      .def("stat", &VM::stat, py::arg("name"))
      .def("close", &VM::close)
      .def_property_readonly("closed", &VM::closed)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](VM& vm, py::args) { vm.close(); });
}
