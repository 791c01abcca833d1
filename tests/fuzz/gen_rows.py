"""List-heavy programs of the fuzz generator (gen_program.Gen, profile `rows`).

Aimed at the JIT's list paths: typed float loads of list elements (a row of
floats is loaded with one tag check per element; an int met there later must
leave the trace: optimizer/number_load.h), loop predication of the bounds
checks of a `for` index plus or minus a constant (a stencil's u[i - 1],
u[i + 1] are checked once, at the loop's entry, for their extreme values; a
loop whose predicates fail at entry, such as u[i - 1] from i = 0, which reads
the last element, must leave at once: optimizer/loop_predicate.h), the alias
analysis that keeps u[i] and u[i + 1] apart (cse, dse), and LICM of loads of
memory the loop does not write.  Each is right only while what the trace
assumed stays true, so the programs break those assumptions in every way the
language allows:

- stencils over float rows in counted loops with offset indices (+-1..3),
  ranges that start at 0 (a negative index reads the end of the list, as in
  Python: docs/language.md, "Negative indices") or at a start that changes
  from pass to pass, steps other than 1, ranges counting down, the two rows
  swapped every outer pass, one row for both (an in-place update: aliasing)
  or aliased from some pass on, the stencil loop in a function called with
  the rows swapped or aliased; loads and stores through the two names (one
  list when aliased) shaped for dse (a store, a load, a second store to the
  element), cse (a load, a store ahead, the same load again) and licm (an
  element at a constant index, or the last, read in the loop that may write
  it);
- float rows that get an int (small, or beyond 2^53, whose arithmetic must
  wrap as the interpreter's does) between passes or at one rare iteration of
  the hot loop, rows of mixed ints and floats, an int `2 *` where the row may
  hold ints, a factor that is a float in some passes and an int in others;
  bools, strings and nil stored rarely into a row and read by a loop that only
  compares them (`==`, `type`), then replaced by a float;
- lists resized in hot loops: push and pop (the spec's list built-ins) on the
  row being read with offsets or on another list, every iteration or rarely,
  directly or in a called function, trimmed back after the pass; rows
  replaced between passes by new lists of another length (the loop bound then
  comes from len);
- dynamic programming over float rows (row[j] = min(prev[j - 1], prev[j]) +
  cost, also over a grid of rows, whose rows may be one shared list:
  list(n, x) shares x), prefix sums built by stores or by push on the list
  being read, range queries and moving averages written back;
- small functions called in the loops that store into the rows, push and pop
  them, or write a global row by its name, so that a trace cannot keep a row's
  data pointer or length in a register across the call;
- in about 30% of the programs, a runtime error in the last block, mostly
  late: an index past the end once the range grows at pass K, pops of a row
  being read (between passes, in the hot loop, in a called function), a
  string or nil read by the arithmetic, a row replaced by a shorter one.

Everything is deterministic (no clock, no random built-ins) and bounded: a
program makes at most about ROWS_WORK element updates (in the interpreter, on
the loaded 2-core machine: about 10 ms median, 90% under 35 ms).  Floats are
printed by print (the shortest round-trip digits) or fmt(x, 17), so a
difference in any bit shows; each block ends by printing a checksum of every
row that reads each element, its length, and short rows whole.  The update
formulas are convex combinations (or grow slowly), so values stay finite: no
inf or NaN is made on purpose.
"""

ROWS_WORK = 2500000  # element updates of one whole program, split between its blocks

BIG_INTS = ["9007199254740993", "4611686018427387904", "-9223372036854775807", "9223372036854775807",
            "-4611686018427387901", "36028797018963971", "3074457345618258603"]
SMALL_INTS = ["0", "1", "-3", "7", "2", "-1", "5"]
FLOATS = ["0.5", "1.5", "-2.25", "3.0", "0.125", "-1.0", "2.75", "0.0", "-0.375", "1.0", "-0.0", "0.1"]
KS = ["0.25", "0.125", "0.2", "0.1", "0.3", "0.5", "0.0625"]
ODD = ["true", '"s"', "false", "nil"]


class RowsMixin:
    def program(self):
        if self.profile == "rows":
            return self.rows_program()
        return super().program()

    # ------------------------------------------------------------ helpers
    def rw_fn(self, lines):
        """A file-level function, written before the block being generated (functions are hoisted)."""
        self.rw_pending.extend(lines)

    def rw_late(self, passes):
        return self.r.randint(max(1, passes // 2), max(1, passes - 1))

    def rw_num(self, mixed):
        if mixed and self.chance(0.35):
            return self.pick(SMALL_INTS + ["4", "-6", "9"])
        return self.pick(FLOATS)

    def rw_row(self, n, mixed=False, prefix="u"):
        """Declares a new row of n numbers: a literal, or list(n, x) filled by a loop."""
        name = self.fresh(prefix)
        if n <= 40 and self.chance(0.5):
            self.emit("let %s = [%s]" % (name, ", ".join(self.rw_num(mixed) for _ in range(n))))
            return name
        self.emit("let %s = list(%d, %s)" % (name, n, self.pick(["0.0", "0.5", "0", "-1.0"])))
        j = self.fresh("j")
        m = self.r.randint(3, 13)
        init = self.pick(["float((%s * %d) %% %d) * 0.25 - 1.0" % (j, self.r.randint(3, 41), m),
                          "float(%s %% %d) * 0.5" % (j, m),
                          "1.0 / float(%s + 1)" % j,
                          "float(%s) * 0.125 - %s" % (j, self.pick(["2.0", "0.5", "4.0"]))])
        if mixed:
            self.emit("for %s in range(%d) { if %s %% %d == 0 { %s[%s] = %s %% 5 - 2 } else { %s[%s] = %s } }" % (
                j, n, j, self.r.randint(2, 5), name, j, j, name, j, init))
        else:
            self.emit("for %s in range(%d) { %s[%s] = %s }" % (j, n, name, j, init))
        return name

    def rw_checksum(self, row, tag):
        """Prints a checksum of row that reads every element, its length, and the row when short."""
        c, x = self.fresh("c"), self.fresh("x")
        self.emit("let %s = 0.0" % c)
        if self.chance(0.5):
            self.emit("for %s in %s { %s = %s + %s }" % (x, row, c, c, x))
        else:
            self.emit("for %s in range(len(%s)) { %s = %s * 0.5 + %s[%s] }" % (x, row, c, c, row, x))
        if self.chance(0.3):
            self.emit('print("%s", fmt(%s, 17), len(%s))' % (tag, c, row))
        else:
            self.emit('print("%s", %s, len(%s))' % (tag, c, row))
        self.emit("if len(%s) <= 24 { print(%s) }" % (row, row))

    def rw_rare(self, s, passes, i, ivals):
        """A condition true at one iteration of one late pass (or of every m-th pass)."""
        iv = self.pick(ivals) if ivals else 0
        if self.chance(0.3):
            m = self.r.randint(3, 11)
            return "%s %% %d == %d and %s == %d" % (s, m, self.r.randint(0, m - 1), i, iv)
        return "%s == %d and %s == %d" % (s, self.rw_late(passes), i, iv)

    def rw_passes(self, per_pass):
        want = self.r.choice([self.r.randint(6, 60), self.r.randint(50, 400), self.r.randint(300, 3000)])
        return max(3, min(want, self.rw_budget // max(1, per_pass)))

    def rows_program(self):
        self.emit("# generated by tests/fuzz/gen_program.py --profile rows, seed %d" % self.seed)
        nblocks = self.r.randint(2, 4)
        fail_at = self.rw_fail_at = nblocks - 1 if self.chance(0.3) else -1
        kinds = [(self.rw_stencil, 0.45), (self.rw_dp, 0.2), (self.rw_prefix, 0.15), (self.rw_stack, 0.2)]
        for b in range(nblocks):
            self.rw_fail = b == fail_at
            self.rw_budget = ROWS_WORK // nblocks
            body = self.r.choices([f for f, _ in kinds], [w for _, w in kinds])[0]
            # at file level (the rows are globals) or in a function (locals), called once
            start = len(self.lines)
            self.rw_pending = []
            self.rw_top = not self.chance(0.4)
            if self.rw_top:
                body()
            else:
                name = self.fresh("blk")
                self.emit("fn %s() {" % name)
                self.ind += 1
                body()
                self.ind -= 1
                self.emit("}")
                self.emit("%s()" % name)
            self.lines[start:start] = self.rw_pending
        return "\n".join(self.lines) + "\n"

    # ------------------------------------------------------------ stencils
    def rw_stencil_expr(self, u, i, L, R, k):
        """A new value for element i from u at offsets -L and +R (lists of ints >= 1)."""
        def at(o):
            if o == 0:
                return "%s[%s]" % (u, i)
            return "%s[%s %s %d]" % (u, i, "-" if o < 0 else "+", abs(o))
        a, b = -self.pick(L), self.pick(R)
        if self.chance(0.5):
            k = self.pick(KS)
        two = self.pick(["2.0", "2"])
        form = self.r.randrange(7)
        if form == 0:
            return "%s + %s * (%s - %s * %s + %s)" % (at(0), k, at(a), two, at(0), at(b))
        if form == 1:
            return "(%s + %s) * 0.25 + %s * 0.5" % (at(a), at(b), at(0))
        if form == 2:
            a2, b2 = -self.pick(L), self.pick(R)
            return "%s + %s * (%s + %s - %s * %s) + 0.0625 * (%s - %s)" % (
                at(0), k, at(a), at(b), two, at(0), at(a2), at(b2))
        if form == 3:
            return "%s + %s * (%s - %s)" % (at(0), k, at(a), at(0))
        if form == 4:
            # ints stay ints (floor division, wrapping sums), floats are floored
            return "(%s + %s) // 2" % (at(a), at(b))
        if form == 5:
            return "min(%s, %s) * 0.5 + max(%s, %s) * 0.5" % (at(a), at(0), at(b), at(0))
        terms = [at(-o) for o in L] + [at(o) for o in R] + [at(0)]
        return "(%s) / %d.0" % (" + ".join(terms), len(terms))

    def rw_stencil(self):
        fail = self.rw_fail
        n = self.r.choice([self.r.randint(6, 24), self.r.randint(20, 80), self.r.randint(60, 200)])
        L = sorted(self.r.sample([1, 2, 3], self.r.randint(1, 2)))
        R = sorted(self.r.sample([1, 2, 3], self.r.randint(1, 2)))
        amax, bmax = max(L), max(R)
        u = self.rw_row(n, self.chance(0.25))
        alias = self.r.random()
        if alias < 0.2:
            v = self.fresh("v")
            self.emit("let %s = %s" % (v, u))      # one row for both: an in-place update
            aliased = "always"
        else:
            if self.chance(0.3):
                v = self.rw_row(n, False, "v")
            else:
                v = self.fresh("v")
                self.emit("let %s = list(%d, 0.0)" % (v, n))
            aliased = "later" if alias < 0.28 else "never"
        k = self.fresh("k")
        self.emit("let %s = %s" % (k, self.pick(KS)))
        cs = self.fresh("cs")
        self.emit("let %s = 0.0" % cs)
        lo = self.pick([amax, amax, amax, 0, 1 if amax > 1 else 0])
        replace = self.chance(0.2)
        lenvar = replace or self.chance(0.25)
        m = self.fresh("m") if lenvar else None
        hi = "%s - %d" % (m, bmax) if lenvar else str(n - bmax)
        down = self.chance(0.3)
        step = self.pick([1, 1, 1, 2, 3])
        trip = max(1, (n - bmax - lo) // step)
        passes = self.rw_passes(trip * 2 + 4)
        swap = aliased != "always" and self.chance(0.75)
        in_fn = not lenvar and not fail and self.chance(0.2)
        s = self.fresh("s")
        fail_kind = self.pick(["grow", "pop", "str", "short", "callpop", "popin"]) if fail else None
        self.rw_st_alias = aliased != "never"
        self.rw_st_lenvar = lenvar
        lo_txt = str(lo)
        if not in_fn and self.chance(0.15):
            # the start moves between passes: some passes read negative indices (the end of the row),
            # the bounds predicates hold at some loop entries and fail at others
            lo_txt = "%s %% %d" % (s, amax + 1)
            lo = amax
        elif not in_fn and self.chance(0.1):
            hi = "%s - %s %% 2" % (hi, s)
        if fail_kind == "grow":
            e = self.fresh("e")
            self.emit("let %s = 0" % e)
            hi = "%s + %s" % (hi, e)
        calls = []
        if self.chance(0.45):
            calls.append(self.pick(["bump", "grow", "pushpop", "poke", "gtouch" if self.rw_top else "bump",
                                    "swapel", "len"]))
        self.emit("for %s in range(%d) {" % (s, passes))
        self.ind += 1
        if fail_kind == "grow":
            # late, or in the first passes (the loop's end is past the row from the start)
            self.emit("if %s == %d { %s = %d }" % (s, self.pick([self.rw_late(passes), 0, 1]), e, bmax + 1))
        if lenvar:
            self.emit("let %s = min(len(%s), len(%s))" % (m, u, v))
        if in_fn:
            # the stencil loop in a function, called with the rows swapped or aliased
            kern = self.fresh("kern")
            calls = ["bump" if c == "gtouch" else c for c in calls]
            self.rw_st_alias = True
            saved = (self.lines, self.ind)
            self.lines, self.ind = ["fn %s(u, v, k) {" % kern], 1
            self.rw_stencil_loop("u", "v", "i", lo_txt, lo, hi, step, down, L, R, "k", None, None, passes, calls,
                                 n, None, False)
            self.emit("return v[%d]" % self.r.randint(0, n - 1))
            kbody = self.lines + ["}"]
            self.lines, self.ind = saved
            self.rw_fn(kbody)   # after the helpers it calls
            args = [(u, v), (v, u)] if swap else [(u, v)]
            if aliased != "always" and self.chance(0.3):
                args.append((u, u))
            if len(args) > 1 and self.chance(0.6):
                self.emit("if %s %% %d == 0 { %s = %s + %s(%s, %s, %s) } else { %s = %s + %s(%s, %s, %s) }" % (
                    s, len(args), cs, cs, kern, args[0][0], args[0][1], k, cs, cs, kern,
                    args[-1][0], args[-1][1], k))
            else:
                a1, a2 = self.pick(args)
                self.emit("%s = %s + %s(%s, %s, %s)" % (cs, cs, kern, a1, a2, k))
        else:
            self.rw_stencil_loop(u, v, self.fresh("i"), lo_txt, lo, hi, step, down, L, R, k, cs, s, passes, calls,
                                 n, fail_kind, aliased == "never")
            if swap:
                t = self.fresh("t")
                self.emit("let %s = %s" % (t, u))
                self.emit("%s = %s" % (u, v))
                self.emit("%s = %s" % (v, t))
        # between passes
        if aliased == "later":
            self.emit("if %s == %d { %s = %s }" % (s, self.r.randint(1, passes - 1), v, u))
        if self.chance(0.4):
            row = self.pick([u, v])
            self.emit("if %s == %d { %s[%d %% len(%s)] = %s }" % (
                s, self.r.randint(passes // 3, passes - 1), row, self.r.randint(0, n - 1), row,
                self.pick(BIG_INTS + SMALL_INTS)))
            if self.chance(0.5):
                self.emit("if %s %% %d == 1 { %s[%d %% len(%s)] = %s }" % (
                    s, self.r.randint(2, 9), row, self.r.randint(0, n - 1), row, self.pick(FLOATS)))
        if self.chance(0.15):
            # the factor: a float in even passes, maybe an int in odd ones
            self.emit("if %s %% 2 == 0 { %s = %s } else { %s = %s }" % (s, k, self.pick(KS), k,
                                                                       self.pick(["0", "0.5", "0.25"])))
        if replace:
            n2 = self.r.randint(4, n + 12)
            kk = self.r.randint(1, passes - 1)
            if self.chance(0.5):
                self.emit("if %s == %d { %s = list(%d, %s) }" % (s, kk, u, n2, self.pick(FLOATS)))
            else:
                self.emit("if %s == %d { %s = %s + [%s, %s] }" % (s, kk, u, u, self.pick(FLOATS), self.pick(FLOATS)))
            if aliased == "always":
                self.emit("if %s == %d { %s = %s }" % (s, kk, v, u))
            else:
                self.emit("if %s == %d { %s = list(len(%s), 0.0) }" % (s, kk, v, u))
        if fail_kind == "pop":
            self.emit("if %s == %d { %s = %s + pop(%s) }" % (s, self.rw_late(passes), cs, cs, self.pick([u, v])))
        elif fail_kind == "short":
            self.emit("if %s == %d { %s = list(%d, 1.5) }" % (s, self.rw_late(passes), v, max(1, n - bmax - 2)))
        if self.chance(0.5):
            self.emit("%s = %s + %s[%s %% len(%s)]" % (cs, cs, u, s, u))
        if self.chance(0.2):
            self.emit("if %s %% %d == 0 { print(%s, %s[0], %s[len(%s) - 1]) }" % (
                s, self.r.randint(7, 40), s, u, v, v))
        self.ind -= 1
        self.emit("}")
        self.emit("print(%s)" % cs)
        self.rw_checksum(u, "u")
        if aliased != "always":
            self.rw_checksum(v, "v")

    def rw_stencil_loop(self, u, v, i, lo_txt, lo, hi, step, down, L, R, k, cs, s, passes, calls, n, fail_kind,
                        odd_ok):
        """The hot loop of a stencil block: v[i] from u at offsets, with stores, resizes and calls."""
        if down:
            rng = "range(%s - 1, %s, %d)" % (hi, ("%d" % (lo - 1)) if lo_txt == str(lo) else lo_txt + " - 1", -step)
        elif step == 1 and self.chance(0.5):
            rng = "range(%s, %s)" % (lo_txt, hi)
        else:
            rng = "range(%s, %s, %d)" % (lo_txt, hi, step)
        ivals = list(range(lo, max(lo + 1, n - max(R)), step))
        aliasable = self.rw_st_alias     # u and v may be one list at some pass
        resize = self.pick(["pushpop", "poppush", "rare", "other", "last", "rare2"]) \
            if self.chance(0.5 if aliasable else 0.3) else None
        odd = s is not None and odd_ok and self.chance(0.15)
        trim = False
        w = None
        if resize == "other":
            w = self.fresh("w")
            self.emit("let %s = []" % w)
        elif resize == "rare2":
            n_entry = self.fresh("n")
            self.emit("let %s = len(%s)" % (n_entry, u))
        self.emit("for %s in %s {" % (i, rng))
        self.ind += 1
        self.emit("%s[%s] = %s" % (v, i, self.rw_stencil_expr(u, i, L, R, k)))
        if self.chance(0.25):
            # a second statement reading what was just written
            self.emit("%s[%s] = %s[%s] * 0.5 + %s[%s - %d] * 0.5" % (v, i, v, i, u, i, self.pick(L)))
        # loads and stores through the two names (one list when aliased): load forwarding (cse),
        # dead stores (dse) and loop-invariant loads (licm) must see that they may alias
        if self.chance(0.2):
            # a store, a load through the other name, a second store to the same element
            y = self.fresh("y")
            self.emit("let %s = %s[%s]" % (y, u, i))
            self.emit("%s[%s] = %s * 0.5 + %s[%s - %d] * 0.5" % (v, i, y, u, i, self.pick(L)))
        if not odd and self.chance(0.2):
            # a load, a store ahead through the other name, the same load again
            b, y = self.pick(R), self.fresh("y")
            self.emit("let %s = %s[%s + %d]" % (y, u, i, b))
            self.emit("%s[%s + %d] = %s[%s + %d] * 0.5 + %s * 0.25 + 0.125" % (v, i, b, v, i, b, y))
            self.emit("%s[%s] = %s[%s] * 0.5 + %s[%s + %d] * 0.5" % (v, i, v, i, u, i, b))
        if self.chance(0.2):
            # an element read at a constant index (or the last), written by the loop when aliased
            c = self.pick(ivals) if ivals else 0
            idx = self.pick(["%d %% len(%s)" % (c, u) if self.rw_st_lenvar else str(c), "-1", "len(%s) - 1" % u])
            self.emit("%s[%s] = %s[%s] * 0.75 + %s[%s] * 0.25" % (v, i, v, i, u, idx))
        if cs is not None and self.chance(0.5):
            self.emit("%s = %s + %s[%s]" % (cs, cs, v, i))
        if s is not None and self.chance(0.35):
            # an int (small or beyond 2^53) stored into a row at one rare iteration
            row, idx = self.pick([(u, "%s + %d" % (i, self.pick(R))), (v, i), (u, i)])
            self.emit("if %s { %s[%s] = %s }" % (self.rw_rare(s, passes, i, ivals), row, idx,
                                                self.pick(BIG_INTS + SMALL_INTS)))
        if self.chance(0.15):
            # a row of mixed ints and floats: every m-th element written as an int
            mm = self.r.randint(3, 17)
            self.emit("if %s %% %d == %d { %s[%s] = %s }" % (i, mm, self.r.randint(0, mm - 1), v, i,
                                                            self.pick(SMALL_INTS + BIG_INTS[:2])))
        if resize == "pushpop":
            # push then pop on the row being read: its storage may move, its length comes back
            y = self.fresh("y")
            self.emit("push(%s, %s[%s])" % (u, v, i))
            self.emit("let %s = pop(%s)" % (y, u))
        elif resize == "poppush":
            # the row being read one shorter for a moment, then as long as before
            y = self.fresh("y")
            self.emit("let %s = pop(%s)" % (y, u))
            self.emit("%s[%s] = %s[%s] * 0.5 + %s * 0.5" % (v, i, v, i, y))
            self.emit("push(%s, %s)" % (u, y))
        elif resize == "rare":
            mm = self.r.randint(5, 31)
            self.emit("if %s %% %d == %d { push(%s, 0.5); push(%s, %s[%s]) }" % (
                i, mm, self.r.randint(0, mm - 1), u, u, v, i))
            trim = True
        elif resize == "rare2":
            # one push at an iteration, one pop (back to the length at entry) at a later one
            mm = self.r.randint(4, 23)
            r1 = self.r.randint(0, mm - 2)
            self.emit("if %s %% %d == %d { push(%s, %s[%s] * 0.5) }" % (i, mm, r1, u, v, i))
            self.emit("if %s %% %d == %d and len(%s) > %s { let %s = pop(%s) }" % (
                i, mm, self.r.randint(r1 + 1, mm - 1), u, n_entry, self.fresh("y"), u))
            trim = True
        elif resize == "other":
            self.emit("push(%s, %s[%s] * 0.5)" % (w, v, i))
        elif resize == "last":
            self.emit("%s[len(%s) - 1] = %s[%s]" % (u, u, v, i))
        for c in calls:
            trim = self.rw_call(c, u, v, i, R, s) or trim
        if fail_kind == "str":
            self.emit("if %s { %s[%s + %d] = %s }" % (self.rw_rare(s, passes, i, ivals), u, i, self.pick(R),
                                                    self.pick(['"s"', "true", "nil"])))
        elif fail_kind == "popin":
            # pops in the hot loop itself, at one iteration: the reads at the top go past the end
            self.emit("if %s { while len(%s) > %s + %d { let %s = pop(%s) } }" % (
                self.rw_rare(s, passes, i, ivals), u, i, self.pick(R), self.fresh("y"), u))
        elif fail_kind == "callpop":
            f = self.fresh("shrink")
            self.rw_fn(["fn %s(l, s) {" % f, "  if s == %d { return pop(l) }" % self.rw_late(passes),
                        "  return 0", "}"])
            self.emit("%s[%s] = %s[%s] + %s(%s, %s) * 0.0" % (v, i, v, i, f, u, s))
        if odd:
            # a bool, a string or nil in the row written, at one iteration (after every read of it):
            # compared below, then replaced
            self.emit("if %s { %s[%s] = %s }" % (self.rw_rare(s, passes, i, ivals), v, i, self.pick(ODD)))
        if s is not None and self.chance(0.12):
            self.emit('if %s { print("at", %s, %s, %s[%s], %s[%s]) }' % (
                self.rw_rare(s, passes, i, ivals), s, i, u, i, v, i))
        self.ind -= 1
        self.emit("}")
        if odd:
            nb, j = self.fresh("nb"), self.fresh("j")
            self.emit("let %s = 0" % nb)
            self.emit("for %s in range(len(%s)) {" % (j, v))
            self.emit('  if %s[%s] == true or %s[%s] == "s" { %s = %s + 1 } elif %s[%s] == nil { %s = %s + 10 }' % (
                v, j, v, j, nb, nb, v, j, nb, nb))
            self.emit("  elif %s[%s] == false { %s = %s + 100 } elif %s[%s] != 0.5 { %s = %s + 1000 }" % (
                v, j, nb, nb, v, j, nb, nb))
            self.emit('  if type(%s[%s]) != "float" and type(%s[%s]) != "int" { %s[%s] = %s }' % (
                v, j, v, j, v, j, self.pick(FLOATS)))
            self.emit("}")
            self.emit("%s = %s + %s" % (cs, cs, nb))
        if trim:
            y = self.fresh("y")
            self.emit("while len(%s) > %d { let %s = pop(%s) }" % (u, n, y, u))
        if w:
            y = self.fresh("y")
            self.emit("while len(%s) > 0 {" % w)
            self.emit("  let %s = pop(%s)" % (y, w))
            self.emit("  %s[len(%s) %% len(%s)] = %s[len(%s) %% len(%s)] * 0.5 + %s * 0.5" % (v, w, v, v, w, v, y))
            self.emit("}")

    def rw_call(self, c, u, v, i, R, s):
        """A call in the hot loop to a function that writes or resizes the rows; True if u grows."""
        f = self.fresh(c)
        cond = "" if self.chance(0.5) else "if %s %% %d == %d " % (i, self.r.randint(2, 13), self.r.randint(0, 1))
        grows = False
        if c == "bump":
            self.rw_fn(["fn %s(l, j, x) {" % f, "  l[j] = l[j] * 0.5 + x", "  return l[j]", "}"])
            stmt = "%s(%s, %s + %d, %s[%s] * 0.5)" % (f, u, i, self.pick(R), v, i)
        elif c == "grow":
            self.rw_fn(["fn %s(l, x) {" % f, "  push(l, x)", "  return len(l)", "}"])
            stmt = "%s(%s, %s[%s])" % (f, u, v, i)
            grows = True
        elif c == "pushpop":
            self.rw_fn(["fn %s(l, x) {" % f, "  push(l, x)", "  push(l, x * 2.0)", "  let y = pop(l)",
                        "  return pop(l) + y", "}"])
            stmt = "%s[%s] = %s[%s] * 0.5 + %s(%s, %s[%s]) * 0.125" % (v, i, v, i, f, u, v, i)
        elif c == "poke":
            self.rw_fn(["fn %s(l, j, s) {" % f, "  if s == %d { l[j] = %s }" % (
                self.r.randint(0, 40), self.pick(BIG_INTS + SMALL_INTS)), "  return l[j]", "}"])
            stmt = "%s(%s, %s + %d, %s)" % (f, u, i, self.pick(R), s if s else i)
        elif c == "swapel":
            self.rw_fn(["fn %s(l, j) {" % f, "  let t = l[j]", "  l[j] = l[j + 1]", "  l[j + 1] = t", "}"])
            stmt = "%s(%s, %s)" % (f, u, i)
        elif c == "gtouch":
            # writes the global row by its name (late-bound), not through an argument
            self.rw_fn(["fn %s(j) {" % f, "  %s[j] = %s[j] * 0.75 + 0.25" % (u, u), "  return %s[j]" % u, "}"])
            stmt = "%s(%s + %d)" % (f, i, self.pick(R))
        else:
            self.rw_fn(["fn %s(l) {" % f, "  return len(l) * 0.5", "}"])
            stmt = "%s[%s] = %s[%s] + %s(%s) * 0.0" % (v, i, v, i, f, u)
        self.emit(("%s{ %s }" % (cond, stmt)) if cond else stmt)
        return grows

    # ------------------------------------------------------------ dynamic programming
    def rw_dp(self):
        fail = self.rw_fail
        W = self.r.choice([self.r.randint(4, 20), self.r.randint(16, 120)])
        C = self.r.randint(3, 17)
        cost = self.fresh("cost")
        mixed = self.chance(0.4)
        self.emit("let %s = [%s]" % (cost, ", ".join(
            self.pick(["1", "2", "0", "3", "-1"]) if mixed and self.chance(0.4)
            else self.pick(["0.5", "1.25", "0.75", "2.0", "0.1", "-0.25", "1.0"]) for _ in range(C))))
        grid = self.chance(0.25)
        best = self.fresh("best")
        self.emit("let %s = 0.0" % best)
        lo = self.pick([1, 1, 0])         # j = 0 reads prev[-1], the last element
        form = self.r.randrange(5)
        hi = W - 1 if form == 1 else W
        passes = self.rw_passes((hi - lo) * 2 + 6)
        if grid:
            passes = min(passes, 300)
            g = self.fresh("g")
            self.emit("let %s = []" % g)
            r0 = self.fresh("r")
            first = self.rw_row(W, mixed, "p")
            self.emit("push(%s, %s)" % (g, first))
            if self.chance(0.3):
                # every row after the first is one list: prev and row alias from the second pass on
                sh = self.fresh("sh")
                self.emit("let %s = list(%d, 0.0)" % (sh, W))
                self.emit("for %s in range(%d) { push(%s, %s) }" % (r0, passes, g, sh))
            else:
                self.emit("for %s in range(%d) { push(%s, list(%d, 0.0)) }" % (r0, passes, g, W))
        else:
            prev = self.rw_row(W, mixed, "p")
            row = self.fresh("q")
            self.emit("let %s = list(%d, 0.0)" % (row, W))
        log = None
        if self.chance(0.25):
            log = self.fresh("log")
            self.emit("let %s = []" % log)
        r = self.fresh("r")
        self.emit("for %s in range(%s) {" % (r, passes if not grid else "1, %d" % (passes + 1)))
        self.ind += 1
        if grid:
            prev, row = self.fresh("p"), self.fresh("q")
            self.emit("let %s = %s[%s - 1]" % (prev, g, r))
            self.emit("let %s = %s[%s]" % (row, g, r))
        if lo == 1:
            self.emit("%s[0] = %s[0] + %s[%s %% %d]" % (row, prev, cost, r, C))
        if form == 1:
            self.emit("%s[%d] = %s[%d] + %s[0]" % (row, W - 1, prev, W - 1, cost))
        j = self.fresh("j")
        down = form != 3 and self.chance(0.25)
        rng = "range(%d, %d, -1)" % (hi - 1, lo - 1) if down else "range(%d, %d)" % (lo, hi)
        self.emit("for %s in %s {" % (j, rng))
        self.ind += 1
        c = "%s[(%s + %s) %% %d]" % (cost, r, j, C)
        if self.chance(0.2):
            f = self.fresh("cst")
            self.rw_fn(["fn %s(c, r, j) {" % f, "  return c[(r * 3 + j) %% %d]" % C, "}"])
            c = "%s(%s, %s, %s)" % (f, cost, r, j)
        if form == 0:
            e = "min(%s[%s - 1], %s[%s]) + %s" % (prev, j, prev, j, c)
        elif form == 1:
            e = "min(min(%s[%s - 1], %s[%s]), %s[%s + 1]) + %s" % (prev, j, prev, j, prev, j, c)
        elif form == 2:
            e = "min(%s[%s - 1] + %s, %s[%s] + 0.5)" % (prev, j, c, prev, j)
        elif form == 3:
            # reads the row being written (j - 1: written the iteration before, or the end at j = 0)
            e = "min(%s[%s - 1] + %s, %s[%s - 1] + 0.25)" % (prev, j, c, row, j)
        else:
            e = "max(%s[%s - 1] * 0.5, %s[%s] - 1.0) + %s" % (prev, j, prev, j, c)
        self.emit("%s[%s] = %s" % (row, j, e))
        if self.chance(0.3):
            self.emit("if %s { %s[%s] = %s }" % (self.rw_rare(r, passes, j, list(range(lo, hi))), row, j,
                                                self.pick(BIG_INTS[:2] + SMALL_INTS)))
        if log and self.chance(0.6):
            self.emit("push(%s, %s[%s])" % (log, row, j))
        elif log:
            self.emit("if %s %% %d == 0 { push(%s, %s[%s]) }" % (j, self.r.randint(2, 7), log, row, j))
        if self.chance(0.2):
            f = self.fresh("relax")
            self.rw_fn(["fn %s(l, j, x) {" % f, "  if x < l[j] { l[j] = x }", "  return l[j]", "}"])
            self.emit("%s(%s, %s, %s[%s] + 0.125)" % (f, row, j, prev, j))
        if fail and self.chance(0.5):
            self.emit("if %s { %s[%s] = %s }" % (self.rw_rare(r, passes, j, list(range(lo, hi))), prev, j,
                                                self.pick(['"s"', "nil"])))
            fail = False
        self.ind -= 1
        self.emit("}")
        if not grid:
            t = self.fresh("t")
            self.emit("let %s = %s" % (t, prev))
            self.emit("%s = %s" % (prev, row))
            self.emit("%s = %s" % (row, t))
        else:
            prev = row
        if self.chance(0.4):
            # keep the values small: subtract the first element from every one
            base, jj = self.fresh("base"), self.fresh("j")
            self.emit("let %s = %s[0]" % (base, prev))
            self.emit("for %s in range(%d) { %s[%s] = %s[%s] - %s }" % (jj, W, prev, jj, prev, jj, base))
        self.emit("%s = %s + %s[%d]" % (best, best, prev, self.r.randint(0, W - 1)))
        if log:
            self.emit("while len(%s) > %d { %s = %s + pop(%s) * 0.0625 }" % (
                log, self.r.randint(0, 5), best, best, log))
        if self.chance(0.3):
            self.emit("if %s == %d { %s[%d] = %s }" % (r, self.rw_late(passes), prev, self.r.randint(0, W - 1),
                                                      self.pick(BIG_INTS + SMALL_INTS)))
        if fail:
            # a row too short for the next pass
            self.emit("if %s == %d { %s = list(%d, 0.0) }" % (r, self.rw_late(passes),
                                                             row if not grid else "%s[%s]" % (g, r), max(1, W - 2)))
        self.ind -= 1
        self.emit("}")
        self.emit('print("best", %s)' % best)
        if grid:
            self.rw_checksum("%s[%d]" % (g, passes), "last")
            self.rw_checksum("%s[%d]" % (g, passes // 2), "mid")
        else:
            self.rw_checksum(prev, "prev")
            self.rw_checksum(row, "row")
        if log:
            self.rw_checksum(log, "log")

    # ------------------------------------------------------------ prefix sums
    def rw_prefix(self):
        fail = self.rw_fail
        n = self.r.choice([self.r.randint(5, 30), self.r.randint(20, 150)])
        u = self.rw_row(n, self.chance(0.3))
        ps = self.fresh("ps")
        self.emit("let %s = list(%d, 0.0)" % (ps, n + 1))
        acc = self.fresh("acc")
        self.emit("let %s = 0.0" % acc)
        wd = self.r.randint(1, min(8, n))
        passes = self.rw_passes(n * 4 + 4)
        s = self.fresh("s")
        self.emit("for %s in range(%d) {" % (s, passes))
        self.ind += 1
        i = self.fresh("i")
        build = self.r.randrange(3)
        if build == 0:
            self.emit("for %s in range(%d) { %s[%s + 1] = %s[%s] + %s[%s] }" % (i, n, ps, i, ps, i, u, i))
        else:
            # built by push on the list being read
            self.emit("%s = [0.0]" % ps)
            last = "%s[%s]" % (ps, i) if build == 1 else "%s[len(%s) - 1]" % (ps, ps)
            if self.chance(0.5):
                last = "%s[-1]" % ps
            self.emit("for %s in range(%d) { push(%s, %s + %s[%s]) }" % (i, n, ps, last, u, i))
        q = self.fresh("i")
        step = self.pick([1, 1, 2, 3])
        down = self.chance(0.3)
        rng = ("range(%d, -1, %d)" % (n - wd, -step)) if down else ("range(0, %d, %d)" % (n - wd + 1, step))
        self.emit("for %s in %s {" % (q, rng))
        self.ind += 1
        k = self.r.randrange(3)
        if k == 0:
            # a moving average written back into the row (a convex combination)
            self.emit("%s[%s] = (%s[%s + %d] - %s[%s]) / %d.0" % (u, q, ps, q, wd, ps, q, wd))
        elif k == 1:
            self.emit("%s = %s + (%s[%s + %d] - %s[%s]) * 0.5" % (acc, acc, ps, q, wd, ps, q))
        else:
            self.emit("%s[%s] = %s[%s] * 0.5 + (%s[%s + %d] - %s[%s]) * 0.25" % (
                u, q, u, q, ps, q, wd, ps, ("%s + 1" % q) if wd > 1 else q))
        if self.chance(0.3):
            self.emit("if %s { %s[%s] = %s }" % (self.rw_rare(s, passes, q, list(range(0, n - wd + 1, step))), u, q,
                                                self.pick(BIG_INTS + SMALL_INTS)))
        if fail and self.chance(0.5):
            self.emit("if %s { %s[%s + %d] = %s }" % (self.rw_rare(s, passes, q, list(range(0, n - wd + 1, step))),
                                                    ps, q, wd, self.pick(['"s"', "true"])))
            fail = False
        self.ind -= 1
        self.emit("}")
        if self.chance(0.35):
            # in place: prefix sums, then back to the differences (rounding drifts, exactly as the interpreter's)
            a, b = self.fresh("i"), self.fresh("i")
            self.emit("for %s in range(1, %d) { %s[%s] = %s[%s] + %s[%s - 1] }" % (a, n, u, a, u, a, u, a))
            self.emit("for %s in range(%d, 0, -1) { %s[%s] = %s[%s] - %s[%s - 1] }" % (b, n - 1, u, b, u, b, u, b))
        if self.chance(0.3):
            self.emit("if %s == %d { %s[%d] = %s }" % (s, self.rw_late(passes), u, self.r.randint(0, n - 1),
                                                      self.pick(BIG_INTS + SMALL_INTS)))
        if self.chance(0.2):
            self.emit("if %s == %d { %s[%d] = %s }" % (s, self.rw_late(passes), u, self.r.randint(0, n - 1),
                                                      self.pick(FLOATS)))
        if fail:
            self.emit("if %s == %d { %s = %s + pop(%s) }" % (s, self.rw_late(passes), acc, acc, u))
        self.emit("%s = %s + %s[%d]" % (acc, acc, ps, n))
        self.ind -= 1
        self.emit("}")
        self.emit('print("acc", %s)' % acc)
        self.rw_checksum(u, "u")
        self.rw_checksum(ps, "ps")

    # ------------------------------------------------------------ stacks
    def rw_stack(self):
        """A list pushed and popped in a hot loop while it is read at offsets from its end."""
        fail = self.rw_fail
        n0 = self.r.randint(3, 30)
        q = self.rw_row(n0, self.chance(0.3), "st")
        acc = self.fresh("acc")
        self.emit("let %s = 0.0" % acc)
        T = self.r.randint(8, 150)
        passes = self.rw_passes(T * 3 + n0 * 2)
        grow_fn = None
        if self.chance(0.35):
            grow_fn = self.fresh("pp")
            self.rw_fn(["fn %s(l, x) {" % grow_fn, "  push(l, x * 0.5)",
                        "  if len(l) > %d { return pop(l) }" % (n0 + self.r.randint(0, 40)), "  return 0.0", "}"])
        s = self.fresh("s")
        self.emit("for %s in range(%d) {" % (s, passes))
        self.ind += 1
        i = self.fresh("i")
        self.emit("for %s in range(%d) {" % (i, T))
        self.ind += 1
        src = self.pick(["%s[%s %% len(%s)] * 0.5 + %s[len(%s) - 1] * 0.25" % (q, i, q, q, q),
                         "%s[-1] * 0.5 + %s[-2] * 0.25" % (q, q),
                         "(%s[len(%s) - 1] + %s[len(%s) - 2] + %s[len(%s) - 3]) / 4.0" % (q, q, q, q, q, q)])
        if grow_fn:
            self.emit("%s = %s + %s(%s, %s)" % (acc, acc, grow_fn, q, src))
        else:
            self.emit("push(%s, %s)" % (q, src))
        # pops: never more than the pushes (pp may pop already)
        pk = 2 if grow_fn else self.r.randrange(3)
        if pk == 0:
            m = self.r.randint(2, 5)
            self.emit("if %s %% %d != 0 { %s = %s + pop(%s) * 0.125 }" % (i, m, acc, acc, q))
        elif pk == 1:
            y = self.fresh("y")
            self.emit("let %s = pop(%s)" % (y, q))
            self.emit("%s[len(%s) - 1] = %s[len(%s) - 1] * 0.5 + %s * 0.5" % (q, q, q, q, y))
        if self.chance(0.3):
            self.emit("if %s { %s[%s %% len(%s)] = %s }" % (self.rw_rare(s, passes, i, list(range(T))), q, i, q,
                                                           self.pick(BIG_INTS + SMALL_INTS)))
        if fail and self.chance(0.5):
            self.emit("if %s { %s[len(%s) - 2] = %s }" % (self.rw_rare(s, passes, i, list(range(T))), q, q,
                                                         self.pick(['"s"', "true", "nil"])))
            fail = False
        self.ind -= 1
        self.emit("}")
        if self.chance(0.5):
            # another counted loop indexing the grown list at offsets
            j = self.fresh("j")
            self.emit("for %s in range(1, len(%s) - 1) { %s[%s] = (%s[%s - 1] + %s[%s + 1]) * 0.5 }" % (
                j, q, q, j, q, j, q, j))
        self.emit("while len(%s) > %d { %s = %s + pop(%s) * 0.0625 }" % (q, n0, acc, acc, q))
        if self.chance(0.25):
            self.emit("if %s == %d { %s = list(%d, %s) }" % (s, self.rw_late(passes), q, self.r.randint(3, n0 + 20),
                                                            self.pick(FLOATS)))
        if fail:
            self.emit("if %s == %d { while len(%s) > 1 { %s = %s + pop(%s) } }" % (
                s, self.rw_late(passes), q, acc, acc, q))
        self.ind -= 1
        self.emit("}")
        self.emit('print("acc", %s)' % acc)
        self.rw_checksum(q, "st")
