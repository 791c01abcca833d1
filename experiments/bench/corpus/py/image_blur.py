# image_blur: a W x H grey image held as one flat float list (pixel (x, y) at y * W + x), made of
# LCG noise, a horizontal gradient and a bright rectangle. Applies a 3x3 Gaussian blur (weights
# 1 2 1 / 2 4 2 / 1 2 1, divided by 16) to the interior again and again, swapping two buffers
# (the border keeps its pixels), then quantizes the result into a 16-bucket histogram.
# Prints the mean and a checksum every quarter of the passes, then the histogram.
import sys
from math import floor

seed = 9001


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def blur(src, dst, w, h):
    for y in range(1, h - 1):
        base = y * w
        for x in range(1, w - 1):
            i = base + x
            s = src[i - w - 1] + 2.0 * src[i - w] + src[i - w + 1]
            s = s + 2.0 * src[i - 1] + 4.0 * src[i] + 2.0 * src[i + 1]
            s = s + src[i + w - 1] + 2.0 * src[i + w] + src[i + w + 1]
            dst[i] = s * 0.0625


def mean(img):
    s = 0.0
    for v in img:
        s += v
    return s / len(img)


def checksum(img):
    s = 0.0
    for i in range(len(img)):
        s += img[i] * (i % 13 + 1)
    return s


def histogram(img):
    hist = [0] * 16
    for v in img:
        b = floor(v / 16.0)
        if b > 15:
            b = 15
        if b < 0:
            b = 0
        hist[b] += 1
    return hist


def main():
    w = int(sys.argv[1]) if len(sys.argv) > 1 else 640
    h = int(sys.argv[2]) if len(sys.argv) > 2 else 480
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    img = [0.0] * (w * h)
    for y in range(h):
        for x in range(w):
            v = rand(96) + 100.0 * x / (w - 1)
            if x > w // 4 and x < w // 2 and y > h // 3 and y < (2 * h) // 3:
                v = 255.0
            img[y * w + x] = v
    tmp = img[:]
    print("start mean", "%.6f" % mean(img), "checksum", "%.6f" % checksum(img))
    quarter = max(1, passes // 4)
    for p in range(1, passes + 1):
        blur(img, tmp, w, h)
        img, tmp = tmp, img
        if p % quarter == 0:
            print("pass", p, "mean", "%.6f" % mean(img), "checksum", "%.6f" % checksum(img))
    print("histogram", histogram(img))


main()
