# union_find: disjoint sets in two flat lists (parent, rank). Merges random edges in batches with
# union by rank and a recursive find with path compression, reporting the component count after
# each batch and the largest component; then builds a minimum spanning forest (Kruskal) over
# weighted edges bucketed by weight, with an iterative path-halving find.
import sys

seed = 8


# Park-Miller minimal standard generator (31 bits)
def rand(n):
    global seed
    seed = seed * 48271 % 2147483647
    return seed % n


def find(parent, x):
    p = parent[x]
    if p == x:
        return x
    root = find(parent, p)
    parent[x] = root
    return root


def find_halving(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def union(parent, rank, a, b):
    ra = find(parent, a)
    rb = find(parent, b)
    if ra == rb:
        return False
    if rank[ra] < rank[rb]:
        parent[ra] = rb
    elif rank[ra] > rank[rb]:
        parent[rb] = ra
    else:
        parent[rb] = ra
        rank[ra] += 1
    return True


def fresh(n):
    return list(range(n))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 150000
    parent = fresh(n)
    rank = [0] * n
    components = n
    for batch in range(5):
        for e in range(n // 5):
            if union(parent, rank, rand(n), rand(n)):
                components -= 1
        sizes = [0] * n
        largest = 0
        for i in range(n):
            r = find(parent, i)
            sizes[r] += 1
            if sizes[r] > largest:
                largest = sizes[r]
        print("batch", batch, "components", components, "largest", largest)

    buckets = [[] for w in range(1000)]
    for e in range(3 * n):
        u = rand(n)
        v = (u + 1 + rand(n - 1)) % n
        buckets[rand(1000)].append([u, v])
    p2 = fresh(n)
    weight = 0
    used = 0
    for w in range(1000):
        for edge in buckets[w]:
            ru = find_halving(p2, edge[0])
            rv = find_halving(p2, edge[1])
            if ru != rv:
                if ru < rv:
                    p2[rv] = ru
                else:
                    p2[ru] = rv
                weight += w
                used += 1
    print("spanning forest edges", used, "weight", weight, "trees", n - used)


main()
