"""Expressions of the fuzz generator (gen_program.Gen): well-typed int, float,
bool, string and number expressions over the variables in scope."""

from gen_base import INT64_MAX, WORK_LIMIT


class ExpressionsMixin:
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
            if vs and self.chance(0.5):
                return 'type(%s) == "%s"' % (self.pick(vs), self.pick(["int", "float", "str", "nil"]))
            if vs:  # a value of any type against one of another: == and != only
                return "%s %s (%s)" % (self.pick(vs), self.pick(["==", "!="]),
                                     self.pick([self.gen_any(d + 1), "nil", '"s1"', "0", "0.0"]))
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
