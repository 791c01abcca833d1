# resize_in_loop: lists that grow and shrink inside hot loops while float values are read and
# written. A sliding window over an LCG random-walk signal keeps its samples in a queue (push at
# the back, a head index at the front, the list rebuilt once the head passes 4096) for the
# running mean, and a monotonic deque (pop from the back, head index at the front) for the
# running maximum. Then a single-server queue simulation keeps the waiting customers' float
# arrival times in a list the same way. Prints the window statistics every quarter of the
# stream and the queue's served count, mean wait and longest queue.
import sys

seed = 8086


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def compact(q, head):
    r = []
    for i in range(head, len(q)):
        r.append(q[i])
    return r


def window_stats(n, w):
    win = []
    wh = 0
    wsum = 0.0
    dv = []
    dp = []
    dh = 0
    x = 0.0
    mean_acc = 0.0
    max_acc = 0.0
    rebuilt = 0
    for t in range(n):
        x = x * 0.98 + (rand(2001) - 1000) / 100.0
        win.append(x)
        wsum += x
        if len(win) - wh > w:
            wsum -= win[wh]
            wh += 1
        while len(dv) > dh and dv[len(dv) - 1] <= x:
            dv.pop()
            dp.pop()
        dv.append(x)
        dp.append(t)
        if dp[dh] <= t - w:
            dh += 1
        if wh > 4096:
            win = compact(win, wh)
            wh = 0
            rebuilt += 1
        if dh > 4096:
            dv = compact(dv, dh)
            dp = compact(dp, dh)
            dh = 0
            rebuilt += 1
        mean = wsum / (len(win) - wh)
        mean_acc += mean
        max_acc += dv[dh]
        if (t + 1) % max(1, n // 4) == 0:
            print("t", t + 1, "mean", "%.6f" % mean, "max", "%.6f" % dv[dh], "deque", len(dv) - dh,
                  "acc", "%.4f" % mean_acc, "%.4f" % max_acc)
    return rebuilt


def queue_sim(customers):
    q = []
    qh = 0
    next_arrival = 0.0
    busy_until = 0.0
    served = 0
    total_wait = 0.0
    longest = 0
    for c in range(customers):
        next_arrival += (rand(1000) + 1) / 500.0
        while qh < len(q) and busy_until <= next_arrival:
            arrived = q[qh]
            qh += 1
            start = busy_until
            if arrived > start:
                start = arrived
            total_wait += start - arrived
            busy_until = start + (rand(1000) + 1) / 505.0
            served += 1
        q.append(next_arrival)
        if len(q) - qh > longest:
            longest = len(q) - qh
        if qh > 4096:
            q = compact(q, qh)
            qh = 0
    while qh < len(q):
        arrived = q[qh]
        qh += 1
        start = busy_until
        if arrived > start:
            start = arrived
        total_wait += start - arrived
        busy_until = start + (rand(1000) + 1) / 505.0
        served += 1
    return served, total_wait, longest, busy_until


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4500000
    customers = int(sys.argv[2]) if len(sys.argv) > 2 else 1500000
    rebuilt = window_stats(n, 1000)
    print("window rebuilt", rebuilt)
    served, total_wait, longest, finish = queue_sim(customers)
    print("served", served, "mean wait", "%.6f" % (total_wait / served), "longest queue", longest, "end", "%.4f" % finish)


main()
