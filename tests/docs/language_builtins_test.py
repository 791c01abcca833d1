"""docs/language.md lists every built-in: the names of the scalar table (vm/builtins/scalar_builtins.cpp),
the op tables' rows marked builtin (vm/graph/ops.def, vm/tensor/elementwise_ops.def) and the dtype names (vm/core/value.cpp), read
from the sources, so that a built-in added to a table without its line in the reference fails here."""
import os
import re
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(path):
    with open(os.path.join(REPO, path)) as f:
        return f.read()


def scalar_builtins():
    """The rows `{"name", bi_fn, min, max}` of the scalar table."""
    return re.findall(r'\{"([a-z_][a-z0-9_]*)",\s*bi_\w+,', read("vm/builtins/scalar_builtins.cpp"))


def tensor_builtins():
    """The op table's rows `TESSERA_OP(Id, "name", "display", true, ...)` and the elementwise
    table's `TESSERA_UNARY(Id, "name", "display", true, ...)` (vm/tensor/elementwise_ops.def, whose
    unary rows ops.def includes)."""
    row = r'TESSERA_{}\(\s*\w+,\s*"([a-z_][a-z0-9_]*)",\s*"[^"]*",\s*true\s*,'
    return (re.findall(row.format("OP"), read("vm/graph/ops.def")) +
            re.findall(row.format("UNARY"), read("vm/tensor/elementwise_ops.def")))


def dtype_names():
    """The dtypes' script names, from dtype_name's table `kNames[kNumDTypes] = {"f32", ...}`."""
    table = re.search(r"kNames\[kNumDTypes\]\s*=\s*\{([^}]*)\}", read("vm/core/value.cpp"))
    return re.findall(r'"([a-z0-9]+)"', table.group(1)) if table else []


class LanguageReference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = read("docs/language.md")

    def test_the_tables_are_read(self):
        # The readers above must keep finding the tables (a renamed macro would make the test vacuous).
        self.assertGreaterEqual(len(scalar_builtins()), 15)
        self.assertGreaterEqual(len(tensor_builtins()), 45)
        self.assertEqual(sorted(dtype_names()), sorted(["f32", "f16", "bf16", "i32", "i64", "bool"]))
        self.assertIn("print", scalar_builtins())
        self.assertIn("attention", tensor_builtins())
        self.assertNotIn("add", tensor_builtins())  # operators are not built-ins

    def test_every_builtin_function_has_its_signature(self):
        missing = [n for n in scalar_builtins() + tensor_builtins() if f"`{n}(" not in self.doc]
        self.assertEqual(missing, [], "built-ins without a `name(...)` entry in docs/language.md")

    def test_every_dtype_name_is_listed(self):
        missing = [n for n in dtype_names() if f"`{n}`" not in self.doc]
        self.assertEqual(missing, [])


if __name__ == "__main__":
    unittest.main()
