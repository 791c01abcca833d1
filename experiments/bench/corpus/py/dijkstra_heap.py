# dijkstra_heap: builds a random directed graph (V nodes, 6 out-edges each, LCG weights) as
# adjacency lists of [target, weight] pairs, then runs Dijkstra from several sources with a
# hand-written binary min-heap of [dist, node] records (lazy deletion). Prints, per run, the
# reachable count, the farthest distance and a distance checksum.
import sys

seed = 42


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def heap_push(heap, item):
    heap.append(item)
    i = len(heap) - 1
    while i > 0:
        parent = (i - 1) // 2
        if heap[parent][0] <= item[0]:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = item


def heap_pop(heap):
    top = heap[0]
    last = heap.pop()
    n = len(heap)
    if n == 0:
        return top
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and heap[c + 1][0] < heap[c][0]:
            c += 1
        if heap[c][0] >= last[0]:
            break
        heap[i] = heap[c]
        i = c
    heap[i] = last
    return top


def build_graph(v):
    adj = []
    for i in range(v):
        edges = []
        edges.append([(i + 1) % v, 50 + rand(50)])
        for k in range(5):
            edges.append([rand(v), 1 + rand(100)])
        adj.append(edges)
    return adj


def dijkstra(adj, src):
    n = len(adj)
    dist = [-1] * n
    done = [False] * n
    heap = []
    dist[src] = 0
    heap_push(heap, [0, src])
    while len(heap) > 0:
        top = heap_pop(heap)
        u = top[1]
        if done[u]:
            continue
        done[u] = True
        du = top[0]
        for e in adj[u]:
            v = e[0]
            nd = du + e[1]
            if dist[v] < 0 or nd < dist[v]:
                dist[v] = nd
                heap_push(heap, [nd, v])
    return dist


def main():
    v = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
    adj = build_graph(v)
    total = 0
    for run in range(4):
        src = (run * 7919) % v
        dist = dijkstra(adj, src)
        reach = 0
        far = 0
        check = 0
        for i in range(v):
            if dist[i] >= 0:
                reach += 1
                if dist[i] > far:
                    far = dist[i]
                check = (check * 17 + dist[i]) % 1000000007
        print("src", src, "reach", reach, "far", far, "check", check)
        total = (total + check) % 1000000007
    print("total", total)


main()
