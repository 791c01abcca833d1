"""Object shapes of the fuzz generator (gen_program.Gen), aimed at the exits
that must build sunk objects (see the comment at the top of the class)."""

import re


class ObjectShapesMixin:
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
