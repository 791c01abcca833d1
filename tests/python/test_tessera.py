"""Tests of the Python module `tessera` (python/tessera_python.cpp).

Run with the build's module on the path:
    build/python/python3 tests/python/test_tessera.py
(ctest runs it as python/tessera.) Needs NumPy.
"""
import contextlib
import gc
import io
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import tessera

IDENT = """
fn ident(x) {
    return x
}
fn typename(x) {
    return type(x)
}
"""


class RunAndGlobals(unittest.TestCase):
    def test_run_defines_globals(self):
        vm = tessera.VM()
        vm.run('let x = 40 + 2\nlet s = "hi"')
        self.assertEqual(vm.globals["x"], 42)
        self.assertEqual(vm.globals["s"], "hi")
        self.assertIn("x", vm.globals)
        self.assertNotIn("nope", vm.globals)
        with self.assertRaises(KeyError):
            vm.globals["nope"]
        self.assertEqual(vm.globals.get("nope", 7), 7)
        # Later sources share the namespace.
        vm.run("let y = x + 1")
        self.assertEqual(vm.globals["y"], 43)

    def test_host_sets_a_global_the_script_reads(self):
        vm = tessera.VM()
        vm.globals["limit"] = 10
        vm.run("let doubled = limit * 2")
        self.assertEqual(vm.globals["doubled"], 20)

    def test_print_goes_to_the_stdout_callable(self):
        out = []
        vm = tessera.VM(stdout=out.append)
        vm.run('print("hello", 1, 2.5, [1, "a"])')
        self.assertEqual("".join(out), 'hello 1 2.5 [1, "a"]\n')

    def test_print_goes_to_sys_stdout_by_default(self):
        vm = tessera.VM()
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            vm.run('print("captured")')
        self.assertEqual(buf.getvalue(), "captured\n")

    def test_file_like_stdout(self):
        buf = io.StringIO()
        vm = tessera.VM(stdout=buf)
        vm.run("print(1 + 1)")
        self.assertEqual(buf.getvalue(), "2\n")

    def test_run_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "prog.tsb")
            with open(path, "w") as f:
                f.write("let from_file = 3 * 3\n")
            vm = tessera.VM()
            vm.run_file(path)
            self.assertEqual(vm.globals["from_file"], 9)
            with self.assertRaises(tessera.Error) as cm:
                vm.run_file(os.path.join(d, "missing.tsb"))
            self.assertEqual(cm.exception.status, "TSR_ENOTFOUND")


class Values(unittest.TestCase):
    def setUp(self):
        self.vm = tessera.VM()
        self.vm.run(IDENT)

    def test_every_scalar_type_round_trips(self):
        cases = [None, True, False, 0, -5, 2**63 - 1, -(2**63), 1.5, -0.25, math.inf, "", "héllo", "a\0b"]
        for value in cases:
            with self.subTest(value=value):
                back = self.vm.call("ident", value)
                self.assertEqual(back, value)
                self.assertIs(type(back), type(value))
        self.assertTrue(math.isnan(self.vm.call("ident", math.nan)))

    def test_python_types_map_to_script_types(self):
        expected = {None: "nil", True: "bool", 3: "int", 3.5: "float", "s": "str"}
        for value, name in expected.items():
            self.assertEqual(self.vm.call("typename", value), name)
        self.assertEqual(self.vm.call("typename", [1]), "list")
        self.assertEqual(self.vm.call("typename", (1, 2)), "list")
        self.assertEqual(self.vm.call("typename", np.zeros(2, np.float32)), "tensor")
        self.assertEqual(self.vm.call("typename", self.vm.globals["ident"]), "fn")
        self.assertEqual(self.vm.call("typename", np.int64(4)), "int")
        self.assertEqual(self.vm.call("typename", np.float32(0.5)), "float")
        self.assertEqual(self.vm.call("typename", np.bool_(True)), "bool")

    def test_int_beyond_64_bits_is_an_overflow_error(self):
        with self.assertRaises(OverflowError):
            self.vm.call("ident", 2**63)

    def test_unsupported_object_is_a_type_error(self):
        with self.assertRaises(TypeError):
            self.vm.call("ident", object())
        with self.assertRaises(TypeError):
            self.vm.call("ident", {"a": 1})

    def test_function_values(self):
        f = self.vm.globals["ident"]
        self.assertIsInstance(f, tessera.Function)
        self.assertEqual(f(5), 5)
        self.assertEqual(repr(f), "<fn ident>")
        self.vm.run("fn apply(f, x) {\n    return f(x)\n}")
        self.assertEqual(self.vm.call("apply", f, "z"), "z")
        self.assertEqual(self.vm.call(f, 1.5), 1.5)
        # A function value goes back to the script as itself.
        self.assertEqual(self.vm.call("ident", f)(9), 9)

    def test_dtype_values(self):
        f32 = self.vm.globals["f32"]
        self.assertIsInstance(f32, tessera.DType)
        self.assertEqual(f32.name, "f32")
        self.assertEqual(f32, "f32")
        self.vm.run("fn make(dt) {\n    return zeros([2], dtype=dt)\n}")
        self.assertEqual(self.vm.call("make", self.vm.globals["i32"]).dtype, "i32")

    def test_call_a_builtin(self):
        # tsr_call_global is tsr_get_global + tsr_call: built-ins included.
        self.assertEqual(self.vm.call(self.vm.globals["len"], [1, 2, 3]), 3)
        self.assertEqual(self.vm.call("len", [1, 2, 3]), 3)

    def test_calling_an_unknown_global(self):
        with self.assertRaises(tessera.Error) as cm:
            self.vm.call("no_such_function")
        self.assertEqual(cm.exception.status, "TSR_ENOTFOUND")


class Lists(unittest.TestCase):
    def test_list_round_trip_copies(self):
        vm = tessera.VM()
        vm.run("fn add_one(l) {\n    push(l, 99)\n    return l\n}")
        given = [1, [2.5, "a"], None, True]
        back = vm.call("add_one", given)
        self.assertEqual(back, [1, [2.5, "a"], None, True, 99])
        self.assertEqual(given, [1, [2.5, "a"], None, True])  # converted, not shared

    def test_nested_list_from_script(self):
        vm = tessera.VM()
        vm.run('let nested = [[1, 2], [3, [4.5, "x"]], []]')
        self.assertEqual(vm.globals["nested"], [[1, 2], [3, [4.5, "x"]], []])

    def test_self_containing_list_is_refused(self):
        vm = tessera.VM()
        cyclic = [1]
        cyclic.append(cyclic)
        with self.assertRaises(ValueError):
            vm.globals["c"] = cyclic


class HostFunctions(unittest.TestCase):
    def test_host_function_called_from_script(self):
        vm = tessera.VM()
        seen = []

        def py_add(a, b):
            seen.append((a, b))
            return a + b

        vm.register("py_add", py_add, 2, 2)
        vm.run("let r = py_add(2, 3)\nlet s = py_add(0.5, 0.25)")
        self.assertEqual(vm.globals["r"], 5)
        self.assertEqual(vm.globals["s"], 0.75)
        self.assertEqual(seen, [(2, 3), (0.5, 0.25)])
        self.assertEqual(vm.stat("host_function_calls"), 2)

    def test_assigning_a_callable_to_globals_registers_it(self):
        vm = tessera.VM()
        vm.globals["greet"] = lambda name: "hello " + name
        vm.globals["pair"] = lambda: [1, "two"]
        vm.run('let g = greet("bob")\nlet p = pair()')
        self.assertEqual(vm.globals["g"], "hello bob")
        self.assertEqual(vm.globals["p"], [1, "two"])
        self.assertIsInstance(vm.globals["greet"], tessera.Function)
        self.assertEqual(vm.globals["greet"]("amy"), "hello amy")

    def test_host_function_gets_and_returns_tensors(self):
        vm = tessera.VM()
        vm.globals["double_it"] = lambda t: t.numpy() * 2
        vm.run("let d = double_it(arange(4, dtype=f32))\nlet third = d[3]")
        self.assertEqual(vm.globals["third"], 6.0)

    def test_host_function_raising_is_a_runtime_error(self):
        vm = tessera.VM()

        def boom(x):
            raise ValueError("bad input %d" % x)

        vm.register("boom", boom)
        vm.run("fn caller() {\n    return boom(7)\n}")
        with self.assertRaises(tessera.RuntimeError) as cm:
            vm.call("caller")
        e = cm.exception
        self.assertIsInstance(e, RuntimeError)  # the builtin, too
        self.assertIsInstance(e, tessera.Error)
        self.assertEqual(e.status, "TSR_ERUNTIME")
        self.assertIn("ValueError: bad input 7", e.message)
        self.assertIn("boom (host function)", e.traceback)
        self.assertIn("caller", e.traceback)
        self.assertEqual(str(e), e.message + "\n" + e.traceback.rstrip("\n"))
        self.assertIsInstance(e.__cause__, ValueError)
        # The VM is still usable.
        vm.run("let after = 1")
        self.assertEqual(vm.globals["after"], 1)

    def test_host_function_returning_an_unconvertible_value(self):
        vm = tessera.VM()
        vm.globals["bad"] = lambda: object()
        with self.assertRaises(tessera.RuntimeError) as cm:
            vm.run("let b = bad()")
        self.assertIn("TypeError", cm.exception.message)

    def test_argument_count_is_checked(self):
        vm = tessera.VM()
        vm.register("two", lambda a, b: a, 2, 2)
        with self.assertRaises(tessera.RuntimeError):
            vm.run("two(1)")

    def test_host_function_cannot_run_the_vm_again(self):
        vm = tessera.VM()
        vm.globals["reenter"] = lambda: vm.run("let z = 1")
        with self.assertRaises(tessera.RuntimeError) as cm:
            vm.run("reenter()")
        self.assertIn("TSR_EBUSY", cm.exception.message)

    def test_keyboard_interrupt_in_host_function_propagates(self):
        vm = tessera.VM()

        def interrupt():
            raise KeyboardInterrupt

        vm.globals["interrupt"] = interrupt
        with self.assertRaises(KeyboardInterrupt):
            vm.run("interrupt()")


class Errors(unittest.TestCase):
    def test_syntax_error(self):
        vm = tessera.VM()
        with self.assertRaises(tessera.SyntaxError) as cm:
            vm.run("let = 3", name="bad.tsb")
        e = cm.exception
        self.assertIs(tessera.SyntaxError, tessera.ScriptSyntaxError)
        self.assertIsInstance(e, tessera.Error)
        self.assertEqual(e.status, "TSR_ESYNTAX")
        self.assertIn("bad.tsb:1:", e.message)

    def test_runtime_error_in_script(self):
        vm = tessera.VM()
        vm.run("fn div(a, b) {\n    return a // b\n}")
        with self.assertRaises(tessera.RuntimeError) as cm:
            vm.call("div", 1, 0)
        self.assertIn("division by zero", cm.exception.message)
        self.assertIn("div", cm.exception.traceback)

    def test_traceback_names_each_functions_source(self):
        vm = tessera.VM()
        vm.run("fn f(x) {\n    return x // 0\n}", name="lib.tsb")
        with self.assertRaises(tessera.RuntimeError) as cm:
            vm.run("let a = f(1)", name="main.tsb")
        self.assertIn("at <main> (main.tsb:1)", cm.exception.traceback)
        self.assertIn("at f (lib.tsb:2)", cm.exception.traceback)

    def test_error_reports_go_to_the_stderr_callable(self):
        err = []
        vm = tessera.VM(stderr=err.append)
        with self.assertRaises(tessera.RuntimeError):
            vm.run("let q = 1 // 0")
        self.assertIn("division by zero", "".join(err))

    def test_closed_vm(self):
        vm = tessera.VM()
        vm.run("fn f() {\n    return 1\n}")
        f = vm.globals["f"]
        vm.close()
        self.assertTrue(vm.closed)
        vm.close()  # twice is fine
        with self.assertRaises(tessera.Error):
            vm.run("let x = 1")
        with self.assertRaises(tessera.Error):
            f()

    def test_context_manager_closes(self):
        with tessera.VM() as vm:
            vm.run("let x = 1")
        self.assertTrue(vm.closed)


class NumPyZeroCopy(unittest.TestCase):
    def test_script_writes_the_host_array(self):
        vm = tessera.VM()
        vm.run("fn scale(t) {\n    t[0] = 42.0\n    return t\n}")
        a = np.arange(1_000_000, dtype=np.float32)
        t = vm.call("scale", a)
        self.assertEqual(a[0], 42.0)  # the script wrote the host's memory
        self.assertIsInstance(t, tessera.Tensor)
        self.assertEqual(t.shape, (1_000_000,))
        self.assertEqual(t.dtype, "f32")
        out = np.from_dlpack(t)
        self.assertTrue(np.shares_memory(out, a))
        self.assertTrue(np.shares_memory(t.numpy(), a))
        self.assertEqual(vm.stat("tensor_bytes_copied"), 0)
        self.assertGreaterEqual(vm.stat("tensors_wrapped"), 1)

    def test_script_sees_the_hosts_later_writes(self):
        vm = tessera.VM()
        a = np.zeros(8, dtype=np.float32)
        vm.globals["buf"] = a
        a[5] = 7.0
        vm.run("let v = buf[5]")
        self.assertEqual(vm.globals["v"], 7.0)
        a[5] = -1.0
        vm.run("let w = buf[5]")
        self.assertEqual(vm.globals["w"], -1.0)
        self.assertEqual(vm.stat("tensor_bytes_copied"), 0)

    def test_script_tensor_exported_to_numpy(self):
        vm = tessera.VM()
        vm.run("let z = zeros([3], dtype=f32)")
        z = vm.globals["z"]
        # NumPy 1.24's from_dlpack views are read-only; Tensor.numpy() is the
        # writable view of the same memory.
        self.assertTrue(np.shares_memory(np.from_dlpack(z), z.numpy()))
        arr = z.numpy()
        self.assertEqual(arr.shape, (3,))
        self.assertEqual(arr.dtype, np.float32)
        arr[1] = 5.0
        vm.run("let seen = z[1]\nz[2] = 3.0")
        self.assertEqual(vm.globals["seen"], 5.0)
        self.assertEqual(arr[2], 3.0)
        # The export keeps the storage alive after the VM is gone.
        vm.close()
        self.assertEqual(arr.tolist(), [0.0, 5.0, 3.0])

    def test_imported_array_outlives_the_hosts_reference(self):
        vm = tessera.VM()
        vm.globals["tmp"] = np.full(4, 3.0, dtype=np.float32)
        gc.collect()
        vm.run("let s = tmp[3]")
        self.assertEqual(vm.globals["s"], 3.0)

    def test_dtypes_and_shapes(self):
        vm = tessera.VM()
        vm.run("fn total(t) {\n    return item(sum(t))\n}\nfn dims(t) {\n    return shape(t)\n}")
        self.assertEqual(vm.call("total", np.arange(5, dtype=np.int64)), 10)
        self.assertEqual(vm.call("total", np.arange(5, dtype=np.int32)), 10)
        self.assertEqual(vm.call("total", np.ones(4, dtype=np.float16)), 4.0)
        self.assertEqual(vm.call("dims", np.zeros((2, 3, 4), np.float32)), [2, 3, 4])
        vm.run("let m = ones([2, 3], dtype=i64)")
        t = vm.globals["m"]
        self.assertEqual((t.shape, t.dtype), ((2, 3), "i64"))
        np.testing.assert_array_equal(np.asarray(t), np.ones((2, 3), np.int64))

    def test_bool_arrays(self):
        vm = tessera.VM()
        vm.run("fn flip(t) {\n    t[1] = true\n    return t\n}")
        a = np.zeros(3, dtype=np.bool_)
        t = vm.call("flip", a)
        self.assertEqual(a.tolist(), [False, True, False])
        self.assertEqual(t.dtype, "bool")
        self.assertEqual(t.numpy().tolist(), [False, True, False])

    def test_uint8_is_a_bool_only_by_value(self):
        # NumPy 1.24 exports uint8 through DLPack as 8-bit unsigned, which is also how bools
        # travelled before DLPack 0.8: bytes of 0 and 1 are bools, any other is refused, never
        # read as a bool (2 and 255 printed true, sum gave 258).
        vm = tessera.VM()
        vm.globals["flags"] = np.array([0, 1, 1], dtype=np.uint8)
        vm.run("let n = item(sum(cast(flags, i32)))")
        self.assertEqual(vm.globals["n"], 2)
        for values in ([0, 2, 1], [255], [1, 0, 7, 1]):
            with self.assertRaises(TypeError) as cm:
                vm.globals["bad"] = np.array(values, dtype=np.uint8)
            message = str(cm.exception)
            self.assertIn("f32 f16 bf16 i32 i64 bool", message)
            self.assertIn("uint8", message)
        strided = np.array([1, 5, 0, 9], dtype=np.uint8)[::2]  # copied, then checked
        vm.globals["s"] = strided
        vm.run("let m = item(sum(cast(s, i32)))")
        self.assertEqual(vm.globals["m"], 1)
        with self.assertRaises(TypeError):
            vm.globals["s2"] = np.array([1, 0, 3, 0], dtype=np.uint8)[::2]
        with self.assertRaises(TypeError) as cm:
            vm.globals["i8"] = np.array([1, 2], dtype=np.int8)
        self.assertIn("f32 f16 bf16 i32 i64 bool", str(cm.exception))

    def test_float64_is_refused_clearly(self):
        vm = tessera.VM()
        with self.assertRaises(TypeError) as cm:
            vm.globals["d"] = np.zeros(3)
        self.assertIn("astype(np.float32)", str(cm.exception))

    def test_strided_array_is_copied(self):
        vm = tessera.VM()
        a = np.arange(10, dtype=np.float32)[::2]
        vm.globals["strided"] = a
        vm.run("let second = strided[1]")
        self.assertEqual(vm.globals["second"], 2.0)
        self.assertGreater(vm.stat("tensor_bytes_copied"), 0)

    def test_tensor_passed_to_another_vm(self):
        a, b = tessera.VM(), tessera.VM()
        a.run("let t = arange(4, dtype=f32)")
        b.globals["t"] = a.globals["t"]
        b.run("t[0] = 9.0")
        a.run("let first = t[0]")
        self.assertEqual(a.globals["first"], 9.0)  # shared through DLPack, not copied


class JitAndStats(unittest.TestCase):
    LOOP = "let acc = 0\nfor i in range(5000) {\n    acc += i\n}\n"

    def test_jit_params_dict_and_list(self):
        vm = tessera.VM(jit_params={"hotloop": 2, "async": 0})
        vm.run(self.LOOP)
        self.assertEqual(vm.globals["acc"], sum(range(5000)))
        self.assertGreaterEqual(vm.stat("traces"), 1)
        vm2 = tessera.VM(jit_params=["hotloop=2"])
        vm2.run(self.LOOP)
        self.assertEqual(vm2.globals["acc"], sum(range(5000)))

    def test_hot_function_called_from_the_host(self):
        # Past `hotcall` host calls the function is recorded from a host
        # call's entry. In a child process, so that a crash fails this test
        # alone.
        code = (
            "import tessera\n"
            "vm = tessera.VM()\n"
            "vm.run('fn inc(x) {\\n    return x + 1\\n}')\n"
            "f = vm.globals['inc']\n"
            "print(sum(vm.call('inc', i) for i in range(500)) + sum(f(i) for i in range(500)))\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, "child died: " + proc.stderr[-2000:])
        self.assertEqual(proc.stdout.strip(), str(2 * sum(range(1, 501))))

    def test_bad_jit_param(self):
        with self.assertRaises(tessera.Error) as cm:
            tessera.VM(jit_params={"no_such_param": 1})
        self.assertEqual(cm.exception.status, "TSR_EINVAL")

    def test_interpreter_only_compiles_nothing(self):
        vm = tessera.VM(jit=False)
        vm.run(self.LOOP)
        self.assertEqual(vm.globals["acc"], sum(range(5000)))
        self.assertEqual(vm.stat("traces"), 0)

    def test_set_jit_param_before_the_first_run_only(self):
        vm = tessera.VM()
        vm.set_jit_param("hotloop", 3)
        vm.run("let a = 1")
        with self.assertRaises(tessera.Error) as cm:
            vm.set_jit_param("hotloop", 4)
        self.assertEqual(cm.exception.status, "TSR_EBUSY")

    def test_stats(self):
        vm = tessera.VM()
        vm.run("fn f(x) {\n    return x + 1\n}")
        for _ in range(3):
            vm.call("f", 1)
        self.assertEqual(vm.stat("host_calls"), 3)
        self.assertIsInstance(vm.stats(), str)
        report = vm.stats(json=True)
        self.assertIsInstance(report, dict)
        with self.assertRaises(tessera.Error) as cm:
            vm.stat("no_such_counter")
        self.assertEqual(cm.exception.status, "TSR_ENOTFOUND")

    def test_enable_dump(self):
        with tempfile.TemporaryDirectory() as d:
            vm = tessera.VM(jit_params={"hotloop": 2})
            vm.enable_dump(d)
            vm.run(self.LOOP)
            vm.close()
            self.assertTrue(os.path.exists(os.path.join(d, "events.jsonl")))


class Independence(unittest.TestCase):
    def test_two_vms_share_nothing(self):
        a, b = tessera.VM(), tessera.VM()
        a.run("let only_a = 1")
        a.globals["host_only_a"] = lambda: 1
        self.assertIn("only_a", a.globals)
        self.assertNotIn("only_a", b.globals)
        self.assertNotIn("host_only_a", b.globals)
        b.run("let only_a = 2")
        self.assertEqual(a.globals["only_a"], 1)

    def test_function_of_another_vm_is_refused(self):
        a, b = tessera.VM(), tessera.VM()
        a.run("fn f() {\n    return 1\n}")
        b.run(IDENT)
        with self.assertRaises(TypeError):
            b.call("ident", a.globals["f"])


class Module(unittest.TestCase):
    def test_versions(self):
        major, minor = tessera.abi_version()
        self.assertEqual(major, 0)
        self.assertGreaterEqual(minor, 1)
        self.assertRegex(tessera.__version__, r"^\d+\.\d+")


if __name__ == "__main__":
    unittest.main()
