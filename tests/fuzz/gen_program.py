#!/usr/bin/env python3
"""Random generator of valid Tessera Script programs that stress a tracing JIT.

generate(seed) -> str returns a deterministic program for each seed.  The
programs are meant for differential testing (interpreter vs. JIT): they are
syntactically valid, terminate quickly (all loops are bounded, total work is
roughly below 1e5 operations), print plenty of intermediate values, and may end
with one deliberate runtime error placed late in a hot loop or in a nested
call, so that error messages and tracebacks are compared as well.

The generator tracks the static type of every variable it declares so that
expressions are well typed; only deliberately placed errors fail at run time.

Profiles (generate(seed, profile)):
  default  the usual programs with, mixed in, shapes aimed at the exits that
           must build sunk objects: nested list literals, lists holding other
           objects made in the same iteration, tensors from lists and from
           other tensor temporaries, strings built after them, aliases, all
           read / printed / mutated only on a rare branch late in a hot loop
           (100 to 3000 iterations), also inside small functions ("makers")
           called from the loop;
  exits    the same shapes made dominant (a smaller, ASan-friendly sample);
  classic  without them: seed for seed the programs of the generator before
           they were added (nor the number-list blocks of gen_numbers.py,
           which the default and exits profiles mix in);
  numbers  the number-list blocks of gen_numbers.py alone (rows of mixed
           ints and floats, float rows that get ints beyond 2^53 after their
           loop was recorded): a fast, dense sample of the number loads' rules;
  rows     list-heavy programs instead (gen_rows.py): stencils over float
           rows with offset indices (also negative: the end of the row),
           steps, ranges counting down, swapped and aliased rows; ints
           (beyond 2^53 too), bools and strings stored into float rows;
           push/pop in hot loops and in called functions; rows replaced
           by lists of another length; DP rows, prefix sums;
  tensors  tensor programs instead (gen_tensors.py): hot loops of
           elementwise chains with broadcasting, reductions, norms, matmul
           epilogues, attention over mixed dtypes, shapes that change between
           iterations, element stores, escapes, deliberate shape errors.

    python3 gen_program.py SEED [--profile default|exits|classic|tensors|numbers|rows]
"""

import random

from gen_base import INT64_MAX, NUMBER_LIST_RATE, OBJ_RATES, PROFILES, WORK_LIMIT, Func
from gen_errors import ErrorBlocksMixin
from gen_expressions import ExpressionsMixin
from gen_numbers import NumberListsMixin
from gen_objects import ObjectShapesMixin
from gen_rows import RowsMixin
from gen_statements import StatementsMixin
from gen_tensors import TensorsMixin


class Gen(TensorsMixin, RowsMixin, ExpressionsMixin, StatementsMixin, ObjectShapesMixin, ErrorBlocksMixin,
          NumberListsMixin):
    def __init__(self, seed, profile="default"):
        self.r = random.Random(seed)
        self.seed = seed
        self.lines = []
        self.ind = 0
        self.counter = 0
        self.globals = {}      # name -> type
        self.scopes = []       # list of dicts name -> type (locals)
        self.loopvars = []     # names of loop variables visible (immutable)
        self.funcs = []        # Func, callable "int" functions
        self.polys = []        # Func with kind poly
        self.fnglobals = {}    # global name holding a function -> arity
        self.list_len = {}     # list var -> guaranteed minimum length
        self.tensors = {}      # tensor var -> (shape, dtype)
        self.in_func = False
        self.simple = False
        # profile: "default" mixes the object shapes in; "exits" makes them
        # dominant; "classic" leaves them out (the programs of the generator
        # before they were added, seed for seed)
        self.profile = profile
        self.makers = []       # (name, structure of what it returns)
        self.objs = []         # (name, structure) of the objects of the current group
        self.obj_floats = []   # float locals the object groups may use
        self.obj_deps = {}     # object -> names of the objects it holds
        self.obj_alias = {}    # second name -> first name
        self.obj_acc = None    # int accumulator of an exits loop
        self.obj_min_period = 7

    # ------------------------------------------------------------ helpers
    def emit(self, s):
        self.lines.append("  " * self.ind + s)

    def fresh(self, prefix):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def visible(self, typ, mutable=False):
        out = []
        for name, t in self.globals.items():
            if t == typ and not self.shadowed(name):
                out.append(name)
        for sc in self.scopes:
            for name, t in sc.items():
                if t == typ:
                    if mutable and name in self.loopvars:
                        continue
                    out.append(name)
        return out

    def shadowed(self, name):
        return any(name in sc for sc in self.scopes)

    def declare_local(self, name, typ):
        self.scopes[-1][name] = typ

    # ------------------------------------------------------------ program
    def header(self):
        self.emit("# generated by tests/fuzz/gen_program.py, seed %d" % self.seed)
        for _ in range(self.r.randint(2, 4)):
            n = self.fresh("g")
            self.emit("let %s = %s" % (n, self.int_lit()))
            self.globals[n] = "int"
        n = self.fresh("big")
        self.emit("let %s = %d" % (n, INT64_MAX - self.r.randint(0, 5000)))
        self.globals[n] = "int"
        for _ in range(self.r.randint(1, 2)):
            n = self.fresh("gf")
            self.emit("let %s = %s" % (n, self.float_lit()))
            self.globals[n] = "float"
        n = self.fresh("gs")
        self.emit('let %s = "%s"' % (n, self.pick(["", "a", "start"])))
        self.globals[n] = "str"
        n = self.fresh("gb")
        self.emit("let %s = %s" % (n, self.pick(["true", "false"])))
        self.globals[n] = "bool"
        n = self.fresh("gn")
        self.emit("let %s = %s" % (n, self.pick(["0", "1.5", "-2"])))
        self.globals[n] = "num"
        for _ in range(self.r.randint(1, 2)):
            n = self.fresh("gd")
            self.emit("let %s = %s" % (n, self.pick(["0", "nil", "1", '"d"', "2.5"])))
            self.globals[n] = "dyn"
        for _ in range(self.r.randint(1, 2)):
            n = self.fresh("gl")
            ln = self.r.randint(1, 8)
            if self.chance(0.5):
                self.emit("let %s = list(%d, %s)" % (n, ln, self.int_lit()))
            else:
                self.emit("let %s = [%s]" % (n, ", ".join(self.int_lit() for _ in range(ln))))
            self.globals[n] = "ilist"
            self.list_len[n] = ln
        n = self.fresh("gm")
        items = ["1", "2.5", '"a"', "nil", "true", "[1, 2]", "-7"]
        self.r.shuffle(items)
        self.emit("let %s = [%s]" % (n, ", ".join(items[:self.r.randint(2, 7)])))
        self.globals[n] = "mlist"
        n = self.fresh("gll")
        if self.chance(0.5):
            self.emit("let %s = list(%d, list(3, 0))" % (n, self.r.randint(1, 4)))
        else:
            self.emit("let %s = [[1, 2, 3], [4, 5, 6], list(3, -1)]" % n)
        self.globals[n] = "llist"
        if self.chance(0.8):
            n = self.fresh("T")
            r_, c_ = self.r.randint(1, 4), self.r.randint(1, 5)
            self.emit("let %s = zeros([%d, %d], dtype=i64)" % (n, r_, c_))
            self.globals[n] = "tensor"
            self.tensors[n] = ((r_, c_), "i64")
            n = self.fresh("T")
            k = self.r.randrange(3)
            if k == 0:
                self.emit("let %s = arange(%d)" % (n, 12))
                self.tensors[n] = ((12,), "i64")
            elif k == 1:
                self.emit("let %s = tensor([[1.5, 2.5], [3.0, -1.0]])" % n)
                self.tensors[n] = ((2, 2), "f32")
            else:
                self.emit("let %s = zeros([3, 3])" % n)
                self.tensors[n] = ((3, 3), "f32")
            self.globals[n] = "tensor"

    def functions(self):
        nf = self.r.randint(2, 6)
        for k in range(nf):
            name = "f%d" % k
            nparams = self.r.randint(0, 3)
            params = ["a%d" % j for j in range(nparams)]
            self.emit("fn %s(%s) {" % (name, ", ".join(params)))
            self.ind += 1
            self.scopes = [{p: "int" for p in params}]
            self.loopvars = []
            self.cur_mult = 1
            self.cur_mult_stack = []
            start = len(self.lines)
            saved_funcs = self.funcs
            # callees: only functions of depth <= 3 so the chain stays <= 4 deep
            self.funcs = [f for f in saved_funcs if f.depth <= 3 and f.cost <= 200]
            before_cost = 0
            r = self.fresh("r")
            self.emit("let %s = %s" % (r, self.gen_int(1)))
            self.scopes[0][r] = "int"
            if params and self.chance(0.4):
                self.emit("if %s > %d { return %s - 1 }" % (params[0], self.r.randint(0, 60), params[0]))
            # optional small loop inside
            cost = 5
            ncalls = 0
            if self.chance(0.5):
                j = self.fresh("j")
                bound = ("%s %% %d + 1" % (params[-1], self.r.randint(2, 6))) if params else str(self.r.randint(1, 6))
                self.emit("for %s in range(%s) {" % (j, bound))
                self.scopes.append({j: "int"})
                self.loopvars.append(j)
                self.ind += 1
                self.cur_mult = 7
                for _ in range(self.r.randint(1, 3)):
                    self.fn_stmt(r)
                self.ind -= 1
                self.cur_mult = 1
                self.loopvars.pop()
                self.scopes.pop()
                self.emit("}")
                cost += 30
            for _ in range(self.r.randint(1, 3)):
                self.fn_stmt(r)
            callees = [f for f in self.funcs]
            if callees and self.chance(0.7):
                f = self.pick(callees)
                self.emit("%s = %s + %s" % (r, r, self.call(f, 1)))
            self.emit("return %s" % r)
            self.ind -= 1
            self.emit("}")
            body = "\n".join(self.lines[start:])
            depth = 1
            for f in saved_funcs:
                if f.name + "(" in body:
                    cost += f.cost * (7 if "for j" in body else 1)
                    depth = max(depth, f.depth + 1)
            self.funcs = saved_funcs + [Func(name, nparams, cost, depth)]
            self.scopes = []
        # polymorphic functions (called with ints and floats)
        for k in range(self.r.randint(0, 2)):
            name = "poly%d" % k
            self.emit("fn %s(x, y) {" % name)
            op = self.pick(["+", "-", "*"])
            if self.chance(0.5):
                self.emit("  if x > y { return x %s y } else { return y - x * 2 }" % op)
            else:
                self.emit("  return x %s y + 1" % op)
            self.emit("}")
            self.polys.append(Func(name, 2, 3, 1, "poly"))
        # recursion with small depth
        self.globals_fn = set()
        if self.chance(0.7):
            self.emit("fn rec(n, acc) {")
            self.emit("  if n <= 0 { return acc %% %d }" % self.r.randint(50, 1000))
            if self.chance(0.5):
                self.emit("  return rec(n - 1, acc * 3 + n)")
            else:
                self.emit("  return n + rec(n - 2, acc + 1) + rec(n - 1, 0) % 7")
            self.emit("}")
            self.globals_fn.add("rec")
        # function-holding globals, reassigned inside hot loops
        for ar in sorted(set(f.nparams for f in self.funcs)):
            same = [f for f in self.funcs if f.nparams == ar and f.cost <= 100]
            if len(same) >= 1 and self.chance(0.7):
                g = self.fresh("op")
                self.emit("let %s = %s" % (g, self.pick(same).name))
                self.globals[g] = "fn%d" % ar
                self.fnglobals[g] = ar

    def fn_stmt(self, r):
        k = self.r.random()
        if k < 0.4:
            self.emit("%s = %s" % (r, self.gen_int(1)))
        elif k < 0.6:
            self.emit("%s %s %s" % (r, self.pick(["+=", "-=", "*="]), self.gen_int(1)))
        elif k < 0.75:
            self.emit("if %s { %s = %s }" % (self.gen_bool(1), r, self.gen_int(1)))
        elif k < 0.85:
            # write a global from inside a function
            vs = [g for g, t in self.globals.items() if t == "int"]
            if vs:
                g = self.pick(vs)
                self.emit("%s = %s + %s" % (g, g, self.gen_int(2)))
        else:
            self.list_stmt()

    def fn_reassign_stmt(self, loopvar):
        if not self.fnglobals:
            return
        g = self.pick(sorted(self.fnglobals))
        ar = self.fnglobals[g]
        same = [f for f in self.funcs if f.nparams == ar and f.cost <= 100]
        f = self.pick(same)
        self.emit("if %s == %d { %s = %s }" % (loopvar, self.r.randint(0, 100), g, f.name))

    def main(self):
        self.cur_mult = 1
        self.cur_mult_stack = []
        nblocks = self.r.randint(2, 5)
        for b in range(nblocks):
            if self.profile == "numbers":
                # number-list blocks only: the number loads' rules in a small, fast program
                self.number_list_block(0.6)
                continue
            if self.profile != "classic" and self.chance(OBJ_RATES[self.profile][0]):
                self.scopes = []
                self.exits_loop()
                continue
            if self.profile != "classic" and self.chance(NUMBER_LIST_RATE):
                self.number_list_block(0.5)
                continue
            k = self.r.random()
            if k < 0.75:
                # a top-level hot loop
                rng, trip = self.for_range(300)
                while trip > 300:
                    rng, trip = self.for_range(300)
                if self.chance(0.4):
                    n = self.r.randint(60, 300)
                    rng, trip = "range(%d)" % n, n
                i = self.fresh("i")
                self.simple = self.chance(0.5)
                if self.simple:
                    n = self.r.randint(60, 300)
                    rng, trip = self.pick([("range(%d)" % n, n), ("range(%d, %d)" % (-n // 2, n // 2), n)])
                self.emit("for %s in %s {" % (i, rng))
                self.scopes = [{i: "int"}]
                self.loopvars = [i]
                self.ind += 1
                if self.chance(0.5):
                    self.fn_reassign_stmt(i)
                self.ind -= 1
                self.loop_body(WORK_LIMIT // max(trip, 1), 0, i, trip)
                self.simple = False
                self.scopes = []
                self.loopvars = []
                self.emit("}")
            elif k < 0.9:
                self.scopes = []
                self.loop_stmt(WORK_LIMIT, 0)
            else:
                self.scopes = []
                self.print_stmt()
        self.scopes = []
        allv = []
        for g, t in self.globals.items():
            if not t.startswith("fn") and t != "int_ro":
                allv.append(g)
        for n in range(0, len(allv), 4):
            self.emit("print(%s)" % ", ".join(allv[n:n + 4]))
        for t in self.tensors:
            self.emit("print(sum(%s), item(sum(%s)))" % (t, t))


def generate(seed, profile="default"):
    if profile not in PROFILES:
        raise ValueError("unknown profile %r (known: %s)" % (profile, ", ".join(PROFILES)))
    return Gen(seed, profile).program()


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="print the program for SEED")
    ap.add_argument("seed", type=int, nargs="?", default=0)
    ap.add_argument("--profile", choices=PROFILES, default="default")
    a = ap.parse_args()
    print(generate(a.seed, a.profile), end="")
