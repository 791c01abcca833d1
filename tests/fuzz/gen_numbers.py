"""Number-list blocks of the fuzz generator (gen_program.Gen): lists whose
elements mix ints and floats, read in float arithmetic in hot loops (the
JIT's number loads, optimizer/number_load.h), and loops whose factor is an
int in some passes of an outer loop and a float in others (peer loop traces,
docs/jit.md), with the cases that must keep an int: two elements that meet,
an int factor, elements written back as ints; and float rows into which ints
beyond 2^53 are stored after their loop was recorded, read by arithmetic with
int and float constants (x * 3 must wrap as the interpreter's int multiply)."""


class NumberListsMixin:
    def number_list_block(self, wrap_rate):
        """A top-level number-list block: a float row that gets big ints (wrap_rate) or mixed rows."""
        self.scopes = []
        if self.chance(wrap_rate):
            self.number_list_wrap()
        else:
            self.number_list_loop()

    def num_elem(self):
        if self.chance(0.5):
            return str(self.r.randint(-9, 9))
        return "%s" % self.pick(["0.5", "-1.25", "2.0", "0.75", "3.5", "-0.25"])

    def number_list(self, n):
        name = self.fresh("nl")
        self.emit("let %s = [%s]" % (name, ", ".join(self.num_elem() for _ in range(n))))
        return name

    def number_list_loop(self):
        # A matmul-shaped block: rows of mixed numbers, an outer loop whose
        # factor is an element (an int or a float: the inner loop's entry
        # type changes from one pass to the next), an inner loop that adds
        # factor * element into a row.
        n_rows = self.r.randint(3, 8)
        width = self.r.randint(4, 40)
        rows = [self.number_list(width) for _ in range(n_rows)]
        acc = self.fresh("na")
        self.emit("let %s = 0.0" % acc)
        ints = self.fresh("ni")
        self.emit("let %s = 0" % ints)
        out = rows[0]
        k = self.fresh("k")
        passes = self.r.randint(20, 120)
        self.emit("for %s in range(%d) {" % (k, passes))
        self.ind += 1
        src = self.pick(rows[1:]) if n_rows > 1 else rows[0]
        f = self.fresh("f")
        self.emit("let %s = %s[%s %% %d]" % (f, src, k, width))
        if self.chance(0.3):
            # a factor that is an int in even passes and a float in odd ones
            self.emit("if %s %% 2 == 0 { %s = %d } else { %s = %s }" % (k, f, self.r.randint(-3, 3), f,
                                                                       self.pick(["0.5", "1.5", "-0.75"])))
        b = self.pick(rows[1:])  # not the row written: it would grow exponentially
        j = self.fresh("j")
        self.emit("for %s in range(%d) {" % (j, width))
        self.ind += 1
        shape = self.r.random()
        if shape < 0.5:
            self.emit("%s[%s] = %s[%s] + %s * %s[%s]" % (out, j, out, j, f, b, j))
        elif shape < 0.75:
            self.emit("%s = %s + %s * %s[%s]" % (acc, acc, f, b, j))
        else:
            self.emit("%s = %s + %s[%s] * 0.5 - %s[%s]" % (acc, acc, b, j, out, j))
        if self.chance(0.4):
            # two elements meet: an int times an int stays an int
            other = self.pick(rows)
            self.emit("let %s = %s[%s] * %s[(%s + 1) %% %d]" % (self.fresh("m"), b, j, other, j, width))
            self.emit("if %s %% 7 == 3 { %s = %s + %s[%s] * %s[(%s + 1) %% %d] }" % (
                j, ints, ints, b, j, other, j, width))
        if self.chance(0.4):
            # an element written back as an int keeps the list mixed
            self.emit("if (%s + %s) %% %d == 0 { %s[%s] = %d }" % (k, j, self.r.randint(3, 9), b, j,
                                                                    self.r.randint(-5, 5)))
        if self.chance(0.06):
            # an element that is no number, late: the load's guard exits and
            # the interpreter raises the error
            self.emit("if %s == %d and %s == %d { %s[%s] = %s }" % (k, passes - 2, j, width // 2, b, j,
                                                                   self.pick(['"s"', "nil", "[1]"])))
        self.ind -= 1
        self.emit("}")
        self.ind -= 1
        self.emit("}")
        self.emit("print(%s, %s)" % (acc, ints))
        for r in rows:
            self.emit("print(%s)" % r)

    # Ints whose arithmetic wraps or loses bits as a float: stored into a float row after its
    # loop was recorded, each must act as an int where the interpreter has one (x * 3 wraps).
    BIG_INTS = ["4611686018427387904", "9007199254740993", "-4611686018427387901", "9223372036854775807",
                "3074457345618258603", "-9223372036854775807"]

    def wrap_use(self, x):
        c = self.pick(["3", "2", "7", "-3", "1", "0"])
        f = self.pick(["0.5", "1.5", "-0.25", "3.0", "2.0"])
        return self.pick(["%s * %s" % (x, c), "%s * %s" % (c, x), "%s + %s" % (x, c), "%s - %s" % (c, x),
                          "%s / %s" % (x, self.pick(["4", "3", "-2"])), "%s * %s" % (x, f), "%s - %s" % (x, f),
                          "%s * %s" % (x, x), "%s + %s" % (x, x), "(%s + %s) * %s" % (x, c, f),
                          "%s * %s * %s" % (x, c, f), "-%s * %s" % (x, c)])

    def number_list_wrap(self):
        width = self.r.randint(3, 12)
        row = self.fresh("wr")
        self.emit("let %s = [%s]" % (row, ", ".join(self.pick(["0.5", "1.5", "-2.25", "3.0", "0.125", "-1.0"])
                                                    for _ in range(width))))
        acc, last = self.fresh("wa"), self.fresh("wl")
        self.emit("let %s = 0.0" % acc)
        self.emit("let %s = 0.0" % last)
        k = self.fresh("k")
        passes = self.r.randint(80, 200)
        self.emit("for %s in range(%d) {" % (k, passes))
        self.ind += 1
        if self.chance(0.5):
            x = self.fresh("x")
            self.emit("for %s in %s {" % (x, row))
        else:
            j = self.fresh("j")
            x = "%s[%s]" % (row, j)
            self.emit("for %s in range(len(%s)) {" % (j, row))
        self.ind += 1
        self.emit("%s = %s + %s" % (acc, acc, self.wrap_use(x)))
        if self.chance(0.5):
            self.emit("%s = %s" % (last, self.wrap_use(x)))
        self.ind -= 1
        self.emit("}")
        # After recording (the loop is hot after 56 iterations): ints, big and small, and back to a float.
        for _ in range(self.r.randint(1, 3)):
            self.emit("if %s == %d { %s[%d] = %s }" % (k, self.r.randint(60, passes - 1), row,
                                                      self.r.randint(0, width - 1),
                                                      self.pick(self.BIG_INTS + ["4", "-7", "0", "2.5"])))
        self.ind -= 1
        self.emit("}")
        self.emit("print(%s, %s)" % (acc, last))
        self.emit("print(%s)" % row)
