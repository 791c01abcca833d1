-- image_blur: a W x H grey image held as one flat float array (pixel (x, y) at y * W + x, +1),
-- made of LCG noise, a horizontal gradient and a bright rectangle. Applies a 3x3 Gaussian blur
-- (weights 1 2 1 / 2 4 2 / 1 2 1, divided by 16) to the interior again and again, swapping two
-- buffers (the border keeps its pixels), then quantizes the result into a 16-bucket histogram.
-- Prints the mean and a checksum every quarter of the passes, then the histogram.
local floor, max = math.floor, math.max
local seed = 9001

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function blur(src, dst, w, h)
  for y = 1, h - 2 do
    local base = y * w + 1
    for x = 1, w - 2 do
      local i = base + x
      local s = src[i - w - 1] + 2.0 * src[i - w] + src[i - w + 1]
      s = s + 2.0 * src[i - 1] + 4.0 * src[i] + 2.0 * src[i + 1]
      s = s + src[i + w - 1] + 2.0 * src[i + w] + src[i + w + 1]
      dst[i] = s * 0.0625
    end
  end
end

local function mean(img)
  local s = 0.0
  for i = 1, #img do s = s + img[i] end
  return s / #img
end

local function checksum(img)
  local s = 0.0
  for i = 1, #img do s = s + img[i] * ((i - 1) % 13 + 1) end
  return s
end

local function histogram(img)
  local hist = {}
  for b = 1, 16 do hist[b] = 0 end
  for i = 1, #img do
    local b = floor(img[i] / 16.0)
    if b > 15 then b = 15 end
    if b < 0 then b = 0 end
    hist[b + 1] = hist[b + 1] + 1
  end
  return hist
end

local function show(list)
  local parts = {}
  for i = 1, #list do parts[i] = string.format("%d", list[i]) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

local w = tonumber(arg and arg[1]) or 640
local h = tonumber(arg and arg[2]) or 480
local passes = tonumber(arg and arg[3]) or 150
local img = {}
for y = 0, h - 1 do
  for x = 0, w - 1 do
    local v = rand(96) + 100.0 * x / (w - 1)
    if x > floor(w / 4) and x < floor(w / 2) and y > floor(h / 3) and y < floor((2 * h) / 3) then v = 255.0 end
    img[y * w + x + 1] = v
  end
end
local tmp = {}
for i = 1, w * h do tmp[i] = img[i] end
print(string.format("start mean %.6f checksum %.6f", mean(img), checksum(img)))
local quarter = max(1, floor(passes / 4))
for p = 1, passes do
  blur(img, tmp, w, h)
  img, tmp = tmp, img
  if p % quarter == 0 then
    print(string.format("pass %d mean %.6f checksum %.6f", p, mean(img), checksum(img)))
  end
end
print("histogram " .. show(histogram(img)))
