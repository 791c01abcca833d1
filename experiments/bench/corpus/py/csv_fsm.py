# csv_fsm: a character-level state machine. Generates N CSV records (quoted names with commas
# and doubled quotes, integer quantities, decimal prices, optional notes), then parses each
# line with an explicit state variable (field start / unquoted / quoted / quote-in-quoted) and
# converts numeric fields with a second small state machine. Prints column totals and counts.
import sys

NAMES = ["bolt", "nut, hex", "washer \"M6\"", "gear", "spring", "cam, lobe", "pin"]
seed = 2024


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def quote(s):
    out = "\""
    for i in range(len(s)):
        if s[i] == "\"":
            out = out + "\"\""
        else:
            out = out + s[i]
    return out + "\""


def gen_record(i):
    name = NAMES[rand(len(NAMES))]
    line = quote(name + " " + str(i % 97)) + "," + str(rand(200) - 20) + ","
    line = line + str(rand(1000)) + "." + str(rand(10)) + str(rand(10)) + ","
    if rand(3) == 0:
        line = line + quote("note " + str(rand(50)) + ", ok")
    return line


# numeric field: states 0 = sign, 1 = integer part, 2 = fraction; returns int or float
def parse_number(s):
    state = 0
    neg = False
    ip = 0
    frac = 0
    fdigits = 0
    for i in range(len(s)):
        c = s[i]
        if state == 0:
            state = 1
            if c == "-":
                neg = True
                continue
        if state == 1:
            if c == ".":
                state = 2
            else:
                ip = ip * 10 + int(c)
        else:
            frac = frac * 10 + int(c)
            fdigits += 1
    v = ip
    if state == 2:
        v = ip + frac / 10 ** fdigits
    if neg:
        return -v
    return v


# CSV line: 0 = field start, 1 = unquoted, 2 = quoted, 3 = quote seen inside quoted
def parse_line(line, stats):
    fields = []
    cur = ""
    state = 0
    for i in range(len(line)):
        c = line[i]
        if state == 0:
            if c == "\"":
                state = 2
                stats[0] += 1
            elif c == ",":
                fields.append(cur)
            else:
                cur = c
                state = 1
        elif state == 1:
            if c == ",":
                fields.append(cur)
                cur = ""
                state = 0
            else:
                cur = cur + c
        elif state == 2:
            if c == "\"":
                state = 3
            else:
                cur = cur + c
        else:
            if c == "\"":
                cur = cur + "\""
                state = 2
                stats[1] += 1
            else:
                fields.append(cur)
                cur = ""
                state = 0
    fields.append(cur)
    return fields


def show_list(l):
    return "[" + ", ".join('"' + x.replace("\\", "\\\\").replace('"', '\\"') + '"' for x in l) + "]"


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
    stats = [0, 0]
    qty = 0
    value = 0.0
    notes = 0
    longest = ""
    nbytes = 0
    for i in range(n):
        line = gen_record(i)
        nbytes += len(line)
        f = parse_line(line, stats)
        assert len(f) == 4, "bad record " + line
        q = parse_number(f[1])
        p = parse_number(f[2])
        qty += q
        value += q * p
        if len(f[3]) > 0:
            notes += 1
        if len(f[0]) > len(longest) or (len(f[0]) == len(longest) and f[0] < longest):
            longest = f[0]
        if i == 0:
            print(line)
            print(show_list(f))
    print("records", n, "bytes", nbytes, "quoted", stats[0], "escaped quotes", stats[1])
    print("qty", qty, "value", "%.2f" % value, "notes", notes)
    print("longest", longest)


main()
