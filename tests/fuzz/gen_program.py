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
           they were added.

    python3 gen_program.py SEED [--profile default|exits|classic]
"""

import random
import re
import sys

INT64_MAX = 2**63 - 1

# Total dynamic-work budget: product of enclosing trip counts (and call costs).
WORK_LIMIT = 20000


def range_len(a, b, s):
    if s > 0:
        return max(0, (b - a + s - 1) // s)
    return max(0, (a - b - s - 1) // (-s))


class Func:
    def __init__(self, name, nparams, cost, depth, kind="int"):
        self.name = name
        self.nparams = nparams
        self.cost = cost      # estimated work of one call
        self.depth = depth    # call depth it reaches (1 = leaf)
        self.kind = kind      # "int": int params -> int; "poly": num -> num


class Gen:
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

    # ------------------------------------------------------------ expressions
    def int_lit(self):
        k = self.r.random()
        if k < 0.55:
            return str(self.r.randint(0, 20))
        if k < 0.75:
            return "(%d)" % -self.r.randint(1, 30) if self.chance(0.5) else str(-self.r.randint(1, 30))
        if k < 0.85:
            return str(self.r.randint(100, 100000))
        if k < 0.9:
            return self.pick(["1_000", "0x1F", "0xff", "255"])
        if k < 0.96:
            return str(self.r.randint(2**62, INT64_MAX))
        return str(2**31 + self.r.randint(-3, 3))

    def nz_lit(self):
        v = self.r.randint(1, 13)
        if self.chance(0.4):
            return "(%d)" % -v
        return str(v)

    def float_lit(self):
        k = self.r.random()
        if k < 0.5:
            return self.pick(["0.5", "1.5", "2.0", "0.25", "3.75", "10.0", "0.1", ".5", "2."])
        if k < 0.7:
            return "(%s)" % self.pick(["-1.5", "-0.5", "-3.0", "-0.1"])
        if k < 0.85:
            return self.pick(["1e-3", "3.0e8", "1e16", "2.5e-05", "1e300"])
        return "%d.%d" % (self.r.randint(0, 99), self.r.randint(0, 99))

    def gen_int(self, d=0):
        r = self.r.random()
        if d >= 3 or r < 0.15:
            if self.chance(0.5):
                vs = self.visible("int")
                if vs:
                    return self.pick(vs)
            return self.int_lit()
        if r < 0.35:
            vs = self.visible("int")
            if vs:
                return self.pick(vs)
            return self.int_lit()
        if r < 0.6:
            op = self.pick(["+", "-", "*", "+", "-"])
            return "(%s %s %s)" % (self.gen_int(d + 1), op, self.gen_int(d + 1))
        if r < 0.7:
            op = self.pick(["//", "%"])
            return "(%s %s %s)" % (self.gen_int(d + 1), op, self.nz_lit())
        if r < 0.75:
            return "%s(%s)" % (self.pick(["abs", "int"]), self.gen_int(d + 1))
        if r < 0.8:
            return "%s(%s, %s)" % (self.pick(["min", "max"]), self.gen_int(d + 1), self.gen_int(d + 1))
        if r < 0.85:
            ls = self.visible("ilist")
            if ls:
                l = self.pick(ls)
                return self.list_read(l, d)
            return "len(%s)" % self.gen_str(d + 1)
        if r < 0.88:
            ls = self.visible("llist")
            if ls:
                l = self.pick(ls)
                return "%s[%s %% len(%s)][%s %% 3]" % (l, self.gen_int(d + 1), l, self.gen_int(d + 1))
            return self.int_lit()
        if r < 0.91:
            ts = [t for t in self.visible("tensor") if self.tensors[t][1] == "i64"]
            if ts:
                return self.tensor_read(self.pick(ts), d)
            return self.int_lit()
        if r < 0.93:
            return "(%d ** %d)" % (self.r.randint(-3, 7), self.r.randint(0, 5))
        if r < 0.95:
            return "floor(%s)" % self.gen_safe_float(d + 1)
        if r < 0.97 and self.funcs and d < 2:
            f = self.pick(self.funcs)
            if f.cost * self.cur_mult <= WORK_LIMIT:
                return self.call(f, d)
        if r < 0.98:
            return "len(%s)" % self.pick(self.visible("ilist") or ['"abc"'])
        vs = self.visible("int")
        return self.pick(vs) if vs else self.int_lit()

    def call(self, f, d):
        args = ", ".join(self.gen_int(d + 1) for _ in range(f.nparams))
        return "%s(%s)" % (f.name, args)

    def list_read(self, l, d):
        idx = self.gen_int(d + 1)
        if self.chance(0.3):
            return "%s[-1 - (%s %% len(%s))]" % (l, idx, l)
        if self.chance(0.3) and self.list_len.get(l, 0) > 0:
            return "%s[%d]" % (l, self.r.randint(-self.list_len[l], self.list_len[l] - 1))
        return "%s[%s %% len(%s)]" % (l, idx, l)

    def tensor_read(self, t, d):
        shape, _ = self.tensors[t]
        idx = ", ".join("%s %% %d" % (self.gen_int(d + 1), n) for n in shape)
        return "%s[%s]" % (t, idx)

    def gen_safe_float(self, d=0):
        # bounded, finite float
        k = self.r.random()
        vs = self.loopvars_int()
        v = self.pick(vs) if vs else str(self.r.randint(0, 50))
        if k < 0.3:
            return "float(%s) / %s" % (v, self.pick(["3.0", "7", "2", "0.5", "-4.0"]))
        if k < 0.6:
            return "sqrt(float(abs(%s)) + %s)" % (v, self.pick(["1.0", "0.5", "2"]))
        return "(%s * 0.5 - %s)" % (v, self.pick(["1.5", "0.25", "(-2.0)", "10.0"]))

    def loopvars_int(self):
        # range-bounded loop counters only (not elements of lists)
        return [n for n in self.loopvars if n[0] in "ijw" and self.lookup(n) == "int"]

    def lookup(self, name):
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        return self.globals.get(name)

    def gen_float(self, d=0):
        r = self.r.random()
        if d >= 3 or r < 0.2:
            vs = self.visible("float")
            if vs and self.chance(0.6):
                return self.pick(vs)
            return self.float_lit()
        if r < 0.4:
            op = self.pick(["+", "-", "*", "+"])
            return "(%s %s %s)" % (self.gen_float(d + 1), op, self.gen_float(d + 1))
        if r < 0.5:
            return "(%s / %s)" % (self.gen_int(d + 1), self.pick(["3", "7", "(-2)", "4.0", "0.5"]))
        if r < 0.6:
            return "float(%s)" % self.gen_int(d + 1)
        if r < 0.7:
            return "(%s %s %s)" % (self.gen_float(d + 1), self.pick(["+", "*", "-"]), self.gen_int(d + 1))
        if r < 0.78:
            return self.gen_safe_float(d + 1)
        if r < 0.83:
            return "(%s %s %s)" % (self.gen_float(d + 1), self.pick(["//", "%"]),
                                   self.pick(["2.5", "(-1.5)", "3", "(-7)"]))
        if r < 0.88:
            ts = [t for t in self.visible("tensor") if self.tensors[t][1] == "f32"]
            if ts:
                return self.tensor_read(self.pick(ts), d)
        if r < 0.92:
            return "%s(%s, %s)" % (self.pick(["min", "max"]), self.gen_float(d + 1), self.gen_float(d + 1))
        if r < 0.96:
            return "%s(%s)" % (self.pick(["sin", "cos", "tanh", "abs"]), self.gen_float(d + 1))
        vs = self.visible("float")
        return self.pick(vs) if vs else self.float_lit()

    def gen_num(self, d=0):
        r = self.r.random()
        vs = self.visible("num")
        if vs and r < 0.4:
            v = self.pick(vs)
            if self.chance(0.5):
                return "(%s %s %s)" % (v, self.pick(["+", "-", "*"]), self.gen_int(d + 1))
            return v
        if r < 0.7:
            return self.gen_int(d)
        return self.gen_float(d)

    def gen_bool(self, d=0):
        r = self.r.random()
        if d >= 2 or r < 0.35:
            op = self.pick(["<", "<=", ">", ">=", "==", "!="])
            return "%s %s %s" % (self.gen_int(d + 1), op, self.gen_int(d + 1))
        if r < 0.5:
            op = self.pick(["<", "<=", ">", ">=", "==", "!="])
            return "%s %s %s" % (self.gen_int(d + 1), op, self.gen_float(d + 1))
        if r < 0.58:
            op = self.pick(["<", ">", "==", "!="])
            return "%s %s %s" % (self.gen_num(d + 1), op, self.gen_num(d + 1))
        if r < 0.64:
            op = self.pick(["<", "==", "!=", ">="])
            return "%s %s %s" % (self.gen_str(d + 1), op, self.gen_str(d + 1))
        if r < 0.72:
            return "(%s) %s (%s)" % (self.gen_bool(d + 1), self.pick(["and", "or"]), self.gen_bool(d + 1))
        if r < 0.78:
            return "not (%s)" % self.gen_bool(d + 1)
        if r < 0.85:
            vs = self.visible("bool")
            if vs:
                return self.pick(vs)
        if r < 0.9:
            return self.pick(["true", "false"])
        if r < 0.95:
            vs = self.visible("dyn")
            if vs:
                return 'type(%s) == "%s"' % (self.pick(vs), self.pick(["int", "float", "str", "nil"]))
        return "%s == %s" % (self.gen_int(d + 1), self.gen_float(d + 1))

    def gen_str(self, d=0):
        r = self.r.random()
        if d >= 3 or r < 0.25:
            vs = self.visible("str")
            if vs and self.chance(0.6):
                return self.pick(vs)
            return '"%s"' % self.pick(["a", "xy", "", "Q", "hello", "-", "z9", "tab\\t", "q\\\"", "\\\\"])
        if r < 0.45:
            return "str(%s)" % self.pick([self.gen_int, self.gen_float, self.gen_num])(d + 1)
        if r < 0.65:
            return "(%s + %s)" % (self.gen_str(d + 1), self.gen_str(d + 1))
        if r < 0.72:
            s = self.gen_str(d + 1)
            return '("ab" + %s)[%s %% (len(%s) + 2)]' % (s, self.gen_int(d + 1), s)
        if r < 0.8:
            return "fmt(%s, %d)" % (self.pick([self.gen_int, self.gen_float])(d + 1), self.r.randint(0, 4))
        if r < 0.86:
            return "type(%s)" % self.pick([self.gen_int, self.gen_float, self.gen_num])(d + 1)
        if r < 0.92:
            ls = self.visible("mlist")
            if ls:
                return "str(%s)" % self.list_read(self.pick(ls), d)
        vs = self.visible("str")
        return self.pick(vs) if vs else '"s"'

    def gen_any(self, d=0):
        k = self.r.randrange(5)
        return [self.gen_int, self.gen_float, self.gen_str, self.gen_bool, self.gen_num][k](d)

    # ------------------------------------------------------------ statements
    def print_stmt(self):
        n = self.r.randint(1, 3)
        items = []
        for _ in range(n):
            k = self.r.random()
            if k < 0.5:
                allv = []
                for t in ("int", "float", "str", "bool", "num", "dyn", "ilist", "mlist", "llist", "tensor"):
                    allv += self.visible(t)
                if allv:
                    items.append(self.pick(allv))
                    continue
            items.append(self.gen_any(1))
        if self.chance(0.3):
            items.insert(0, '"%s"' % self.fresh("p"))
        self.emit("print(%s)" % ", ".join(items))

    def assign_stmt(self):
        choices = []
        for t in ("int", "float", "str", "bool", "num"):
            for v in self.visible(t, mutable=True):
                choices.append((v, t))
        if not choices:
            return self.let_stmt()
        v, t = self.pick(choices)
        if t == "int":
            k = self.r.random()
            if k < 0.3:
                self.emit("%s = %s" % (v, self.gen_int()))
            elif k < 0.55:
                self.emit("%s %s %s" % (v, self.pick(["+=", "-=", "*="]), self.gen_int(1)))
            elif k < 0.65:
                self.emit("%s %s %s" % (v, self.pick(["//=", "%="]), self.nz_lit()))
            elif k < 0.8:
                self.emit("%s = %s * %d + %s" % (v, v, self.pick([31, 1000003, 6364136223846793005, -7]),
                                                 self.gen_int(1)))
            else:
                self.emit("%s = (%s + %s) %% %s" % (v, v, self.gen_int(1), self.nz_lit()))
        elif t == "float":
            k = self.r.random()
            if k < 0.5:
                self.emit("%s = %s" % (v, self.gen_float()))
            elif k < 0.8:
                self.emit("%s %s %s" % (v, self.pick(["+=", "-=", "*=", "/="]),
                                        self.pick([self.gen_float, self.gen_safe_float])(1)))
            else:
                self.emit("%s = %s * 0.5 + %s" % (v, v, self.gen_safe_float(1)))
        elif t == "str":
            self.emit("%s = %s" % (v, self.gen_str()))
            # bound the length (self-concatenation would otherwise grow exponentially)
            self.emit('if len(%s) > %d { %s = "%s" }' % (v, self.r.randint(5, 40), v,
                                                          self.pick(["", "r", "reset"])))
        elif t == "bool":
            self.emit("%s = %s" % (v, self.gen_bool()))
        else:
            self.emit("%s = %s" % (v, self.gen_num()))

    def let_stmt(self):
        t = self.pick(["int", "int", "float", "str", "bool", "num"])
        name = self.fresh("v")
        e = {"int": self.gen_int, "float": self.gen_float, "str": self.gen_str,
             "bool": self.gen_bool, "num": self.gen_num}[t]()
        self.emit("let %s = %s" % (name, e))
        self.declare_local(name, t)

    def list_stmt(self):
        ls = self.visible("ilist")
        ms = self.visible("mlist")
        k = self.r.random()
        if ls and k < 0.35:
            l = self.pick(ls)
            idx = self.gen_int(1)
            if self.chance(0.3):
                self.emit("%s[-1 - (%s %% len(%s))] = %s" % (l, idx, l, self.gen_int(1)))
            else:
                self.emit("%s[%s %% len(%s)] = %s" % (l, idx, l, self.gen_int(1)))
        elif ls and k < 0.55:
            l = self.pick(ls)
            self.emit("push(%s, %s)" % (l, self.gen_int(1)))
            self.emit("if len(%s) > %d { %s }" % (l, self.list_len[l] + self.r.randint(0, 10),
                                                   self.pick(["pop(%s)" % l, "%s = %s" % (
                                                       self.any_int_target(), "pop(%s)" % l)])))
        elif ms and k < 0.75:
            l = self.pick(ms)
            self.emit("%s[%s %% len(%s)] = %s" % (l, self.gen_int(1), l, self.gen_any(1)))
        elif k < 0.85:
            ls2 = self.visible("llist")
            if ls2:
                l = self.pick(ls2)
                self.emit("%s[%s %% len(%s)][%s %% 3] = %s" % (l, self.gen_int(1), l, self.gen_int(1),
                                                               self.gen_int(1)))
        else:
            ts = self.visible("tensor")
            if ts:
                t = self.pick(ts)
                shape, dt = self.tensors[t]
                idx = ", ".join("%s %% %d" % (self.gen_int(1), n) for n in shape)
                val = self.gen_int(1) if dt == "i64" else self.pick([self.gen_float, self.gen_safe_float])(1)
                if dt == "i64" and self.chance(0.3):
                    val = "%s[%s] + %s" % (t, idx, self.gen_int(2))
                self.emit("%s[%s] = %s" % (t, idx, val))

    def temp_list_stmt(self):
        # A small list literal that is only read at constant indices: the JIT
        # sinks its allocation. Branches that read it (or print it) make exits
        # where it is live, which must build it.
        n = self.r.randint(1, 4)
        elems = [self.gen_int(1) for _ in range(n)]
        name = self.fresh("t")
        self.emit("let %s = [%s]" % (name, ", ".join(elems)))
        tgt = self.any_int_target()
        self.emit("%s = %s + %s[%d]" % (tgt, tgt, name, self.r.randrange(n)))
        if self.chance(0.5):
            if self.chance(0.3) and self.cur_mult <= 40:
                body = "print(%s)" % name
            else:
                body = "%s = %s - %s[%d]" % (tgt, tgt, name, self.r.randrange(n))
            self.emit("if %s { %s }" % (self.gen_bool(1), body))

    def temp_tensor_stmt(self):
        # Small tensor temporaries (f32 or i64, 1 to 4 elements) through a
        # chain of operations: those the JIT computes as scalars (sinking)
        # and some it does not (`%`, comparisons), read by item(sum()),
        # element loads and shape queries. A branch that prints or mutates
        # one makes exits where it is live, which must build it.
        n = self.r.randint(1, 4)
        floats = self.chance(0.6)
        gen = (lambda: self.pick([self.gen_float, self.gen_safe_float])(2)) if floats else (lambda: self.gen_int(2))
        cur = self.fresh("tv")
        # Sometimes from a tensor the program already has (its layout is
        # guarded, not known): a global such as T or A.
        known = [t for t in self.visible("tensor")
                 if self.tensors[t][1] == ("f32" if floats else "i64") and len(self.tensors[t][0]) == 1]
        if known and self.chance(0.3):
            t = self.pick(known)
            self.emit("let %s = %s %s" % (cur, t, "* 1.0" if floats else "+ 0"))
            n = self.tensors[t][0][0]
        else:
            self.emit("let %s = tensor([%s])" % (cur, ", ".join(gen() for _ in range(n))))
        shape = [n]
        f_ops = ["{t} * {f}", "{t} + {t}", "{t} - {i}", "{t} / {f}", "sqrt({t} * {t} + 1.0)", "-{t}",
                 "exp({t} * 0.001)", "{t} * tensor([{same}])", "zeros([2, 1]) + {t}", "full([{n}], {f}) - {t}"]
        i_ops = ["{t} * {i}", "{t} + {t}", "{t} - {i}", "-{t}", "{t} * tensor([{same}])"]
        for _ in range(self.r.randint(1, 3)):
            # `%` is not computed element by element: what it reads stays allocated.
            op = "{t} % 3" if self.chance(0.1) else self.pick(f_ops if floats else i_ops)
            nxt = self.fresh("tv")
            same = ", ".join(gen() for _ in range(shape[-1]))
            self.emit("let %s = %s" % (nxt, op.format(t=cur, f=self.float_lit(), i=self.int_lit(), n=shape[-1],
                                                       same=same)))
            if op.startswith("zeros"):
                shape = [2] + shape
            cur = nxt
        tgt = self.any_int_target()
        if floats:
            self.emit("%s = %s + int(item(sum(%s)) > 0.5) + numel(%s)" % (tgt, tgt, cur, cur))
        else:
            self.emit("%s = %s + item(sum(%s)) + len(%s) + %s[%s]" % (
                tgt, tgt, cur, cur, cur, ", ".join(str(self.r.randrange(k)) for k in shape)))
        if self.chance(0.5) and self.cur_mult <= 40:
            body = self.pick(["print(item(sum(%s)), %s)" % (cur, cur),
                              "%s[%s] = %s\n%sprint(%s)" % (cur, ", ".join("0" for _ in shape),
                                                             "1.5" if floats else "7", "  " * (self.ind + 1), cur)])
            self.emit("if %s {\n%s%s\n%s}" % (self.gen_bool(1), "  " * (self.ind + 1), body, "  " * self.ind))

    def list_stmt_simple(self):
        l = self.pick(self.visible("ilist"))
        if self.chance(0.6):
            self.emit("%s[%s %% len(%s)] = %s" % (l, self.gen_int(1), l, self.gen_int(1)))
        else:
            tgt = self.any_int_target()
            self.emit("%s = %s + %s" % (tgt, tgt, self.list_read(l, 1)))

    def any_int_target(self):
        vs = self.visible("int", mutable=True)
        if vs:
            return self.pick(vs)
        name = self.fresh("v")
        self.emit("let %s = 0" % name)
        self.declare_local(name, "int")
        return name

    def dyn_stmt(self, loopvar):
        # a loop-carried variable whose type changes mid-loop
        vs = self.visible("dyn", mutable=True)
        if not vs:
            return
        v = self.pick(vs)
        K = self.r.randint(0, 80)
        k = self.r.randrange(6)
        if k == 0:   # int -> float -> ...
            self.emit('if type(%s) == "int" { %s = %s + %s } elif type(%s) == "float" { %s = %s * 1.5 } '
                      'else { %s = 0 }' % (v, v, v, self.gen_int(2), v, v, v, v))
            self.emit("if %s == %d { %s = %s }" % (loopvar, K, v, self.gen_float(1)))
        elif k == 1:  # int -> str
            self.emit('if %s > %d { %s = "s" + str(%s) } elif type(%s) == "int" { %s = %s + 1 } '
                      'else { %s = 0 }' % (loopvar, K, v, loopvar, v, v, v, v))
        elif k == 2:  # nil -> int
            self.emit("if %s == nil { %s = %s } elif type(%s) == \"int\" { %s = (%s * 3 + %s) %% 1000 } "
                      "else { %s = nil }" % (v, v, loopvar, v, v, v, loopvar, v))
        elif k == 3:
            self.emit("%s = %s" % (v, self.gen_any(1)))
        else:
            # alternates between int and float every few iterations
            nv = self.visible("num", mutable=True)
            tgt = self.pick(nv) if nv else v
            self.emit("if %s %% %d == %d { %s = %s } else { %s = %s }" % (
                loopvar, self.r.randint(2, 5), self.r.randint(0, 1), tgt, self.gen_int(1), tgt,
                self.gen_float(1)))
            self.emit("%s = %s" % (tgt, self.pick(["%s + 1" % tgt, "%s * 2" % tgt, "%s - %s" % (tgt, loopvar),
                                                   "%s / 2" % tgt, "%s // 3" % tgt, "-%s" % tgt])))

    def if_stmt(self, budget, depth, loopvar):
        if loopvar and self.chance(0.6):
            K = self.r.randint(0, 120)
            cond = "%s %s %d" % (loopvar, self.pick([">", ">=", "<", "=="]), K)
        else:
            cond = self.gen_bool()
        self.emit("if %s {" % cond)
        self.block(budget, depth + 1, loopvar, nstmts=self.r.randint(1, 3))
        while self.chance(0.35):
            if loopvar and self.chance(0.5):
                self.emit("} elif %s %% %d == %d {" % (loopvar, self.r.randint(2, 9), self.r.randint(0, 1)))
            else:
                self.emit("} elif %s {" % self.gen_bool())
            self.block(budget, depth + 1, loopvar, nstmts=self.r.randint(1, 2))
        if self.chance(0.5):
            self.emit("} else {")
            self.block(budget, depth + 1, loopvar, nstmts=self.r.randint(1, 2))
        self.emit("}")

    def for_range(self, maxtrip):
        form = self.r.randrange(4)
        if self.chance(0.06):
            # bounds near the ends of the int64 range
            n = self.r.randint(0, min(maxtrip, 40))
            if self.chance(0.5):
                return "range(%d, %d)" % (INT64_MAX - n, INT64_MAX), n
            if self.chance(0.5):
                start = -INT64_MAX + n - 1
                start_s = str(start) if start > -INT64_MAX - 1 else "-%d - 1" % INT64_MAX
                return "range(%s, -%d - 1, -1)" % (start_s, INT64_MAX), n
            s = 2**62 + self.r.randint(0, 5)
            a, b = -INT64_MAX + self.r.randint(0, 9), INT64_MAX - self.r.randint(0, 9)
            return "range(%d, %d, %d)" % (a, b, s), range_len(a, b, s)
        if form == 0:
            n = self.r.randint(0, maxtrip)
            return "range(%d)" % n, n
        if form == 1:
            a = self.r.randint(-50, 50)
            b = a + self.r.randint(-3, maxtrip)
            return "range(%d, %d)" % (a, b), range_len(a, b, 1)
        if form == 2:
            s = self.r.randint(2, 7)
            a = self.r.randint(-60, 60)
            b = a + self.r.randint(-3, maxtrip * s)
            return "range(%d, %d, %d)" % (a, b, s), range_len(a, b, s)
        s = -self.r.randint(1, 5)
        a = self.r.randint(-30, 200)
        b = a - self.r.randint(-3, maxtrip * -s)
        return "range(%d, %d, %d)" % (a, b, s), range_len(a, b, s)

    def loop_stmt(self, budget, depth):
        maxtrip = min(300, budget)
        if maxtrip < 2:
            return
        k = self.r.random()
        if k < 0.7:
            rng, trip = self.for_range(maxtrip)
            while trip > maxtrip:
                rng, trip = self.for_range(maxtrip)
            i = self.fresh("i")
            self.emit("for %s in %s {" % (i, rng))
            self.scopes.append({i: "int"})
            self.loopvars.append(i)
            self.loop_body(budget // max(trip, 1), depth, i, trip)
            self.loopvars.pop()
            self.scopes.pop()
            self.emit("}")
        elif k < 0.8:
            ls = self.visible("ilist") + self.visible("mlist")
            if not ls or budget < 30:
                return
            l = self.pick(ls)
            x = self.fresh("x")
            self.emit("for %s in %s {" % (x, l))
            t = "int" if self.lookup(l) == "ilist" else "dyn_ro"
            self.scopes.append({x: t})
            self.loopvars.append(x)
            self.cur_mult_stack.append(self.cur_mult)
            self.cur_mult *= 30
            self.block(budget // 30, depth + 1, None, nstmts=self.r.randint(1, 3))
            if t == "dyn_ro" and self.cur_mult < 200:
                self.emit("  print(%s)" % x)
            self.cur_mult = self.cur_mult_stack.pop()
            self.loopvars.pop()
            self.scopes.pop()
            self.emit("}")
        else:
            w = self.fresh("w")
            n = self.r.randint(0, maxtrip)
            self.emit("let %s = 0" % w)
            # declared in the current block; at top level that is a global
            self.declare_var(w, "int_ro")
            if self.chance(0.5):
                self.emit("while %s < %d {" % (w, n))
            else:
                self.emit("while true {")
                self.emit("  if %s >= %d { break }" % (w, n))
            self.ind += 1
            self.emit("%s += 1" % w)
            self.scopes.append({"%s" % w: "int"})
            self.loopvars.append(w)
            if self.chance(0.5):
                self.emit("if %s %% %d == %d { continue }" % (w, self.r.randint(2, 6), self.r.randint(0, 1)))
            if self.chance(0.4):
                self.emit("if %s > %d { break }" % (w, self.r.randint(0, maxtrip + 10)))
            self.ind -= 1
            self.loop_body(budget // max(n, 1), depth, w, n, opened=False)
            self.loopvars.pop()
            self.scopes.pop()
            self.emit("}")

    def declare_var(self, name, typ):
        if self.scopes:
            self.scopes[-1][name] = typ
        else:
            self.globals[name] = typ

    def loop_body(self, budget, depth, loopvar, trip, opened=True):
        self.cur_mult_stack.append(self.cur_mult)
        self.cur_mult *= max(trip, 1)
        self.ind += 1
        self.scopes.append({})
        # print at some iterations
        if self.cur_mult <= 40 and self.chance(0.5):
            self.print_stmt()
        elif self.cur_mult <= 3000 and self.chance(0.7):
            p = max(2, self.cur_mult // 40)
            self.emit("if %s %% %d == %d {" % (loopvar, p, self.r.randint(0, p - 1)))
            self.ind += 1
            self.print_stmt()
            self.ind -= 1
            self.emit("}")
        n = self.r.randint(2, 6)
        for _ in range(n):
            self.stmt(budget, depth + 1, loopvar)
        if self.chance(0.15):
            self.emit("if %s == %d { %s }" % (loopvar, self.r.randint(0, 100), self.pick(["break", "continue"])))
        self.scopes.pop()
        self.ind -= 1
        self.cur_mult = self.cur_mult_stack.pop()

    def block(self, budget, depth, loopvar, nstmts):
        self.ind += 1
        self.scopes.append({})
        for _ in range(nstmts):
            self.stmt(budget, depth, loopvar)
        self.scopes.pop()
        self.ind -= 1

    def stmt(self, budget, depth, loopvar):
        if (self.profile != "classic" and loopvar and self.cur_mult <= WORK_LIMIT // 4
                and self.chance(OBJ_RATES[self.profile][1])):
            self.obj_group_stmt(loopvar)
            return
        k = self.r.random()
        if self.simple:
            # traceable subset: scalar arithmetic, list element access, calls,
            # branches that flip, type changes; no inner loops or tensor stores
            if k < 0.4:
                self.assign_stmt()
            elif k < 0.5:
                self.let_stmt()
            elif k < 0.6 and self.visible("ilist"):
                self.list_stmt_simple()
            elif k < 0.63:
                self.temp_list_stmt()
            elif k < 0.65:
                self.temp_tensor_stmt()
            elif k < 0.7 and loopvar:
                self.dyn_stmt(loopvar)
            elif k < 0.8 and depth < 4:
                self.if_stmt(budget, depth, loopvar)
            elif k < 0.95:
                self.call_stmt(budget)
            else:
                self.assign_stmt()
            return
        if k < 0.25:
            self.assign_stmt()
        elif k < 0.35:
            self.let_stmt()
        elif k < 0.45:
            self.list_stmt()
        elif k < 0.47:
            self.temp_list_stmt()
        elif k < 0.5:
            self.temp_tensor_stmt()
        elif k < 0.6 and loopvar:
            self.dyn_stmt(loopvar)
        elif k < 0.7 and depth < 5:
            self.if_stmt(budget, depth, loopvar)
        elif k < 0.8 and depth < 4 and budget >= 4:
            self.loop_stmt(budget, depth)
        elif k < 0.9:
            self.call_stmt(budget)
        elif k < 0.95 and self.cur_mult <= 40:
            self.print_stmt()
        else:
            self.assign_stmt()

    def call_stmt(self, budget):
        k = self.r.random()
        if k < 0.3 and self.fnglobals:
            g = self.pick(sorted(self.fnglobals))
            ar = self.fnglobals[g]
            tgt = self.any_int_target()
            self.emit("%s = %s(%s)" % (tgt, g, ", ".join(self.gen_int(1) for _ in range(ar))))
            return
        if k < 0.4 and self.polys:
            f = self.pick(self.polys)
            vs = self.visible("num", mutable=True)
            args = ", ".join(self.gen_num(1) for _ in range(f.nparams))
            if vs:
                self.emit("%s = %s(%s)" % (self.pick(vs), f.name, args))
            else:
                self.emit("print(%s(%s))" % (f.name, args)) if self.cur_mult <= 40 else None
            return
        if k < 0.5 and "rec" in self.globals_fn:
            tgt = self.any_int_target()
            self.emit("%s = %s + rec(%s %% %d, %s)" % (tgt, tgt, self.gen_int(1), self.r.randint(2, 9),
                                                       self.gen_int(2)))
            return
        fs = [f for f in self.funcs if f.cost * self.cur_mult <= WORK_LIMIT]
        if not fs:
            return
        f = self.pick(fs)
        if self.chance(0.7):
            tgt = self.any_int_target()
            self.emit("%s = %s" % (tgt, self.call(f, 0)))
        else:
            self.emit(self.call(f, 0))

    # ------------------------------------------------------------ objects at exits
    # Shapes aimed at the exits that must build sunk objects (allocation
    # sinking of list literals and small tensors): nested list literals,
    # lists holding other objects made in the same iteration, tensors from
    # lists and from other tensor temporaries, strings built after them (so
    # that the registers of the temporaries get reused), aliases; all of them
    # read, printed or mutated only on a rare branch late in a hot loop, also
    # inside small functions called from the loop (inlined into its trace).
    #
    # Every object is described by a static structure so that reads and
    # writes are well typed: ("int",), ("float",), ("str",),
    # ("list", (children...)), ("tensor", "f32"|"i64", n).

    def o_int(self, lv):
        k = self.r.random()
        if k < 0.3:
            return lv
        if k < 0.8:
            return "%s %s %d" % (lv, self.pick(["+", "-", "*", "*"]), self.r.randint(1, 9))
        if k < 0.9:
            return "%s %% %d" % (lv, self.r.randint(2, 11))
        return str(self.r.randint(-9, 20))

    def o_float(self, lv):
        k = self.r.random()
        if self.obj_floats and k < 0.25:
            return self.pick(self.obj_floats)
        if k < 0.6:
            return "%s * %s" % (lv, self.pick(["1.0", "1.0", "1.5", "0.5", "0.25", "2.0"]))
        if k < 0.8:
            return "%s * 0.5 + %s" % (lv, self.pick(["0.25", "1.0", "(-2.5)"]))
        return self.pick(["2.0", "0.5", "(-1.5)", "3.25", "1e-3"])

    def o_str(self, lv):
        return self.pick(['"x" + str(%s)' % lv, 'str(%s * 2) + "y"' % lv, '"s" + str(%s %% 7)' % lv,
                          'fmt(%s * 0.5, 1) + "!"' % lv])

    def o_list(self, lv, depth, deps):
        n = self.r.randint(1, 3)
        parts, kids = [], []
        for _ in range(n):
            k = self.r.random()
            if depth < 2 and k < 0.3:
                e, s = self.o_list(lv, depth + 1, deps)
            elif k < 0.5 and self.objs:
                name, s = self.pick(self.objs)
                e = name
                deps.add(name)
            elif k < 0.78:
                e, s = self.o_int(lv), ("int",)
            elif k < 0.93:
                e, s = self.o_float(lv), ("float",)
            else:
                e, s = self.o_str(lv), ("str",)
            parts.append(e)
            kids.append(s)
        return "[%s]" % ", ".join(parts), ("list", tuple(kids))

    def o_tensor(self, lv, deps):
        prior = [(nm, s) for nm, s in self.objs if s[0] == "tensor"]
        if prior and self.chance(0.65):
            t, ts = self.pick(prior)
            deps.add(t)
            dt, n, mag = ts[1], ts[2], ts[3]
            # a second operand: a tensor that broadcasts with t (same length or one element)
            us = [(nm, s) for nm, s in prior if s[2] in (n, 1) or n == 1]
            u, us_ = self.pick(us)
            # divisors are constants: no inf or nan (whose sign printf shows)
            f = self.pick(["3.0", "0.5", "2.0", "4.0", "1.5", "0.25"] + self.obj_floats)
            d = self.pick(["4.0", "2.0", "8.0", "0.5"])
            i = str(self.r.randint(1, 9))
            if dt == "f32":
                ops = ["{t} * {f}", "{t} + {u}", "-{t} / {d} + {u}", "{t} - {f}", "{f} - {t}",
                       "sqrt({t} * {t} + 1.0)", "{t} * {u}", "abs({t}) + {f}", "{t} / {d}"]
            else:
                ops = ["{t} * {i}", "{t} + {u}", "-{t}", "{t} - {i}", "{t} * {u}", "{t} + {t}", "{t} * 0.5"]
            op = self.pick(ops)
            # rough bound of the magnitude of the elements: keep i64 far from
            # overflow and f32 finite
            umag = us_[3]
            mag2 = {"{t} * {f}": mag * 3000, "{t} * {u}": mag * umag, "{t} * {i}": mag * 9,
                    "sqrt({t} * {t} + 1.0)": mag + 1}.get(op, mag + umag + 3000)
            if mag2 > (1e15 if dt == "i64" else 1e25) or (dt == "i64" and umag > 1e15):
                op = "{t} - {i}" if dt == "i64" else "{t} / {d}"
                mag2 = mag + 9
            e = op.format(t=t, u=u, f=f, d=d, i=i)
            if "{u}" in op:
                deps.add(u)
                n2 = max(n, us_[2])
                dt2 = "f32" if "f32" in (dt, us_[1]) else "i64"
            else:
                n2 = n
                dt2 = "f32" if (dt == "f32" or op == "{t} * 0.5") else "i64"
            return e, ("tensor", dt2, n2, mag2)
        n = self.pick([1, 1, 2, 2, 3, 4])
        if self.chance(0.65):
            return "tensor([%s])" % ", ".join(self.o_float(lv) for _ in range(n)), ("tensor", "f32", n, 1e6)
        return "tensor([%s])" % ", ".join(self.o_int(lv) for _ in range(n)), ("tensor", "i64", n, 1e6)

    def o_leaves(self, name, s):
        """(path expression, scalar type) of every scalar reachable in s."""
        out = []
        if s[0] == "tensor":
            for k in range(s[2]):
                out.append(("%s[%d]" % (name, k), "float" if s[1] == "f32" else "int"))
        elif s[0] == "list":
            for k, c in enumerate(s[1]):
                p = "%s[%d]" % (name, k)
                if c[0] in ("int", "float", "str"):
                    out.append((p, c[0]))
                else:
                    out += self.o_leaves(p, c)
        return out

    def o_read(self):
        """A scalar expression reading one of the objects (int, float or str)."""
        name, s = self.pick(self.objs)
        if s[0] == "int":
            return "%s + 1.5" % name
        if s[0] == "tensor" and self.chance(0.4):
            return self.pick(["item(sum(%s))", "numel(%s)", "len(%s)"]) % name
        if s[0] == "str":
            return "len(%s)" % name
        leaves = self.o_leaves(name, s)
        if not leaves:
            return "len(%s)" % name
        p, t = self.pick(leaves)
        if t == "int":
            return "%s + %s" % (p, self.pick(["1", "1.5", "%s" % self.r.randint(2, 9)]))
        if t == "float":
            return "%s %s" % (p, self.pick(["+ 1.5", "* 2.0", "- 0.25"]))
        return '%s + "!"' % p

    def o_int_read(self):
        name, s = self.pick(self.objs)
        if s[0] == "int":
            return name
        if s[0] == "tensor":
            if s[1] == "i64":
                return self.pick(["item(sum(%s))" % name, "%s[%d]" % (name, self.r.randrange(s[2]))])
            if s[3] > 1e12:
                return "numel(%s)" % name
            return self.pick(["int(item(sum(%s)))" % name, "int(%s[%d])" % (name, self.r.randrange(s[2]))])
        leaves = [(p, t) for p, t in self.o_leaves(name, s) if t != "str"]
        if s[0] == "str" or not leaves or self.chance(0.2):
            return "len(%s)" % name
        p, t = self.pick(leaves)
        return p if t == "int" else "int(%s)" % p

    def o_holders(self, name):
        """Names whose printed form shows a mutation of `name`."""
        out = [name]
        if name in self.obj_alias:
            out.append(self.obj_alias[name])
        changed = True
        while changed:
            changed = False
            for nm, _ in self.objs:
                if nm not in out and (self.obj_deps.get(nm, set()) & set(out)):
                    out.append(nm)
                    changed = True
        return out

    def o_rare_cond(self, lv, trip):
        P = self.pick([97, 97, 101, 133, 150, 211, 250, 401, 500, 700])
        if trip is not None:
            while P > trip:
                P = P // 2
        P = max(P, self.obj_min_period)
        k = self.r.random()
        if trip is not None and k < 0.3:
            return "%s == %d" % (lv, trip - 1)
        if trip is not None and k < 0.45:
            return "%s == %d" % (lv, self.r.randint(trip * 3 // 4, trip - 1))
        if k < 0.65:
            return "%s %% %d == %d" % (lv, P, min(5, P - 1))
        return "%s %% %d == %d" % (lv, P, self.r.randrange(P))

    def o_rare_branch(self, lv, trip, where=None):
        self.emit("if %s {" % self.o_rare_cond(lv, trip))
        self.ind += 1
        for _ in range(self.r.randint(1, 2)):
            k = self.r.random()
            if k < 0.45:
                names = [nm for nm, _ in self.objs]
                self.r.shuffle(names)
                items = names[:self.r.randint(1, 3)]
                if where:
                    items.insert(0, '"%s"' % where)
                self.emit("print(%s)" % ", ".join(items))
            elif k < 0.7:
                self.emit("print(%s)" % ", ".join(self.o_read() for _ in range(self.r.randint(1, 2))))
            else:
                # mutation through one name, printed through every name that shows it
                cands = [(nm, s) for nm, s in self.objs if s[0] in ("list", "tensor") and self.o_leaves(nm, s)]
                if not cands:
                    self.emit("print(%s)" % self.o_read())
                    continue
                name, s = self.pick(cands)
                p, t = self.pick(self.o_leaves(name, s))
                val = {"int": "-5", "float": "-0.5", "str": '"m"'}[t]
                self.emit("%s = %s" % (p, val))
                self.emit("print(%s)" % ", ".join(self.o_holders(name)))
        self.ind -= 1
        self.emit("}")

    def o_let(self, name, expr, s, deps):
        self.emit("let %s = %s" % (name, expr))
        self.objs.append((name, s))
        self.obj_deps[name] = deps
        if self.scopes:
            self.declare_local(name, "obj")

    def obj_group(self, lv, trip, nobj, rare=True, where=None):
        """Objects made in one iteration, strings after them, maybe a hot-path
        read into an int, and a rare branch that prints, reads or mutates them."""
        for _ in range(nobj):
            k = self.r.random()
            deps = set()
            if k < 0.12 and self.objs:
                # a second name for an object
                name, s = self.pick(self.objs)
                al = self.fresh("al")
                self.o_let(al, name, s, {name})
                self.obj_alias[al] = name
            elif k < (0.32 if self.profile == "exits" else 0.22) and self.makers:
                mk, s = self.pick(self.makers)
                self.o_let(self.fresh("mo"), "%s(%s)" % (mk, self.o_int(lv)), s, deps)
            elif k < 0.6:
                e, s = self.o_list(lv, 0, deps)
                self.o_let(self.fresh("ol"), e, s, deps)
            else:
                e, s = self.o_tensor(lv, deps)
                self.o_let(self.fresh("ot"), e, s, deps)
        if self.chance(0.6):
            # a string made after the literals: its temporaries reuse their registers
            self.o_let(self.fresh("st"), self.o_str(lv), ("str",), set())
            if self.chance(0.3):
                e, s = self.o_list(lv, 1, set())
                self.o_let(self.fresh("ol"), e, s, set())
        if self.chance(0.35):
            tgt = self.obj_acc or self.any_int_target()
            self.emit("%s = %s + %s" % (tgt, tgt, self.o_int_read()))
        if rare:
            self.o_rare_branch(lv, trip, where)

    def obj_group_stmt(self, loopvar):
        # mixed into ordinary loop bodies: one group, its own objects only
        saved = (self.objs, self.obj_floats, self.obj_acc, self.obj_min_period)
        self.objs, self.obj_floats, self.obj_acc = [], [], None
        self.obj_min_period = max(7, self.cur_mult // 20)
        lv = loopvar
        # the element bounds assume small loop variables: reduce those of
        # ranges near the ends of the int64 range
        for line in reversed(self.lines):
            if line.lstrip().startswith("for %s in " % loopvar):
                if re.search(r"\d{10}", line):
                    lv = "(%s %% 1000)" % loopvar
                break
        self.obj_group(lv, None, self.r.randint(1, 3), rare=self.chance(0.8))
        self.objs, self.obj_floats, self.obj_acc, self.obj_min_period = saved

    def maker_functions(self, count):
        # small functions that make objects (and may print them on a rare
        # call), called from hot loops: inlined into their traces
        for k in range(count):
            name = "mk%d" % k
            self.emit("fn %s(n) {" % name)
            self.ind += 1
            self.scopes = [{"n": "int"}]
            self.objs, self.obj_floats, self.obj_deps, self.obj_acc = [], [], {}, None
            self.obj_min_period = 7
            if self.chance(0.3):
                fx = self.fresh("fx")
                self.emit("let %s = n * 0.5" % fx)
                self.obj_floats = [fx]
            self.obj_group("n", None, self.r.randint(1, 3), rare=self.chance(0.5), where="in " + name)
            if self.chance(0.7):
                ret, s = self.pick(self.objs)
            else:
                ret = self.o_int_read()
                s = ("int",)
            self.emit("return %s" % ret)
            self.ind -= 1
            self.emit("}")
            self.scopes = []
            self.makers.append((name, s))

    def exits_loop(self):
        # a top-level loop, hot under the default thresholds, made of object groups
        trip = self.pick([100, 150, 300, 400, 1000, 2000, 3000, self.r.randint(100, 3000)])
        acc = None
        if self.chance(0.5):
            acc = self.fresh("oacc")
            self.emit("let %s = 0" % acc)
            self.globals[acc] = "int"
        i = self.fresh("i")
        self.emit("for %s in range(%d) {" % (i, trip))
        self.ind += 1
        self.scopes = [{i: "int"}]
        self.loopvars = [i]
        self.objs, self.obj_floats, self.obj_deps, self.obj_acc = [], [], {}, acc
        self.obj_min_period = 7
        if self.chance(0.5):
            fx = self.fresh("fx")
            self.emit("let %s = %s * 0.5" % (fx, i))
            self.obj_floats = [fx]
        ngroups = self.r.randint(1, 3)
        for g in range(ngroups):
            self.obj_group(i, trip, self.r.randint(1, 4), rare=(g == ngroups - 1 or self.chance(0.6)))
            if self.chance(0.2):
                self.cur_mult_stack.append(self.cur_mult)
                self.cur_mult = trip
                self.assign_stmt()
                self.cur_mult = self.cur_mult_stack.pop()
        self.ind -= 1
        self.emit("}")
        self.scopes = []
        self.loopvars = []
        self.objs = []

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
            if self.profile != "classic" and self.chance(OBJ_RATES[self.profile][0]):
                self.scopes = []
                self.exits_loop()
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

    # ------------------------------------------------------------ errors
    def error_block(self):
        N = self.r.randint(60, 250)
        K = N - self.r.randint(1, 12)
        kind = self.pick(["div", "mod", "index", "nindex", "tindex", "notfn", "arity",
                          "nonbool", "pop", "assert", "strint", "overflow", "iter"])
        where = self.pick(["loop", "loop", "call", "call"])
        self.emit("# deliberate runtime error: %s in %s" % (kind, where))
        if kind == "notfn" or kind == "arity":
            if not self.funcs:
                kind = "div"
        pre = []
        if kind in ("notfn", "arity"):
            f = self.pick(self.funcs)
            cb = self.fresh("cb")
            self.emit("let %s = %s" % (cb, f.name))
            if kind == "notfn":
                pre = ["if n == K { %s = %s }" % (cb, self.pick(["5", "nil", '"str"', "[1]", "2.5"]))]
            else:
                other = [g for g in self.funcs if g.nparams != f.nparams]
                if not other:
                    pre = ["if n == K { %s = 5 }" % cb]
                else:
                    pre = ["if n == K { %s = %s }" % (cb, self.pick(other).name)]
            args = ", ".join("n" for _ in range(f.nparams))
            body = pre + ["let e = %s(%s)" % (cb, args)]
        elif kind == "nonbool":
            fl = self.fresh("flag")
            self.emit("let %s = true" % fl)
            body = ["if n == K { %s = %s }" % (fl, self.pick(["1", "nil", '"yes"', "0.0"])),
                    self.pick(["if %s { e = e + 1 }" % fl, "if n > 3 and %s { e = e + 1 }" % fl,
                               "while %s { break }" % fl, "if not %s { e = e - 1 }" % fl])]
            body = ["let e = n"] + body
        elif kind == "pop":
            pl = self.fresh("pl")
            self.emit("let %s = list(%d, 0)" % (pl, K))
            body = ["let e = pop(%s)" % pl]
        elif kind == "div":
            body = ["let e = %s // (K - n)" % self.gen_int(2)]
        elif kind == "mod":
            body = ["let e = (n * 7) % (n - K)"]
        elif kind == "index":
            body = ["let el = [1, 2.5, \"x\"]", "let e = el[(n // K) * 3]"]
        elif kind == "nindex":
            body = ["let el = list(4, n)", "let e = el[-1 - (n // K) * 4]"]
        elif kind == "tindex":
            body = ["let et = zeros([2, 3], dtype=i64)", "et[1, 2] = n", "let e = et[1, 2 + n // K]"]
        elif kind == "assert":
            body = ['assert(n < K, "n reached " + str(n))', "let e = n"]
        elif kind == "strint":
            dv = self.fresh("dv")
            self.emit('let %s = "s"' % dv)
            body = ["if n == K { %s = n }" % dv, 'let e = "v" + %s' % dv]
        elif kind == "overflow":
            self.emit("fn deep(n) { return 1 + deep(n + 1) }")
            body = ["let e = n", "if n == K { e = deep(0) }"]
        else:
            body = ["let e = 0", "let it = [1, 2]", "if n == K { it = n }", "for q in it { e = e + q }"]
        body = [s.replace("K", str(K)) for s in body]
        if where == "call":
            depth = self.r.randint(1, 3)
            self.emit("fn err0(n) {")
            for s in body:
                self.emit("  " + s)
            self.emit('  if type(e) == "int" { return e }')
            self.emit("  return 0")
            self.emit("}")
            for d in range(1, depth):
                self.emit("fn err%d(n) {" % d)
                self.emit("  let t = n * 2")
                self.emit("  return err%d(n) + t" % (d - 1))
                self.emit("}")
            acc = self.fresh("acc")
            self.emit("let %s = 0" % acc)
            self.emit("for n in range(%d) {" % N)
            self.emit("  %s = %s + err%d(n)" % (acc, acc, depth - 1))
            self.emit("  if n %% %d == 0 { print(\"err-loop\", n, %s) }" % (self.r.randint(5, 30), acc))
            self.emit("}")
            self.emit("print(%s)" % acc)
        else:
            acc = self.fresh("acc")
            self.emit("let %s = 0" % acc)
            self.emit("for n in range(%d) {" % N)
            for s in body:
                self.emit("  " + s)
            self.emit('  if type(e) == "int" { %s = %s + e }' % (acc, acc))
            self.emit("  if n %% %d == 0 { print(\"err-loop\", n, %s) }" % (self.r.randint(5, 30), acc))
            self.emit("}")
            self.emit("print(%s)" % acc)

    def program(self):
        self.header()
        self.functions()
        if self.profile == "exits":
            self.maker_functions(self.r.randint(1, 3))
        elif self.profile == "default" and self.chance(0.5):
            self.maker_functions(self.r.randint(1, 2))
        self.main()
        if self.chance(0.4 if self.profile != "exits" else 0.2):
            self.error_block()
        return "\n".join(self.lines) + "\n"


PROFILES = ("default", "exits", "classic")

# chance that a top-level block is an exits loop / that a loop statement is an
# object group
OBJ_RATES = {"default": (0.2, 0.04), "exits": (0.65, 0.2)}


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
