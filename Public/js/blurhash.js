// BlurHash (https://blurha.sh): a few cosine components of an image in about 30 characters, sent
// with a photo so a receiver has its colours before the thumbnail or the photo arrives. Encoding
// follows the reference implementation; decoding here is only the average colour (the DC term),
// which is what a bubble shows behind a photo that has no thumbnail.

const DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";

function base83(value, length) {
  let out = "";
  for (let i = 1; i <= length; i++) out += DIGITS[Math.floor(value / 83 ** (length - i)) % 83];
  return out;
}

const toLinear = (value) => {
  const v = value / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
};

const toSRGB = (value) => {
  const v = Math.max(0, Math.min(1, value));
  return Math.trunc(v <= 0.0031308 ? v * 12.92 * 255 + 0.5 : (1.055 * v ** (1 / 2.4) - 0.055) * 255 + 0.5);
};

const signPow = (value, exponent) => Math.sign(value) * Math.abs(value) ** exponent;

/** The BlurHash of RGBA `pixels` (`width` × `height`), with `cx` × `cy` components (4 × 3: 28 characters). */
export function encodeBlurHash(pixels, width, height, cx = 4, cy = 3) {
  const linear = new Float32Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    for (let c = 0; c < 3; c++) linear[i * 3 + c] = toLinear(pixels[i * 4 + c]);
  }
  const factors = [];
  for (let y = 0; y < cy; y++) {
    for (let x = 0; x < cx; x++) {
      const norm = x === 0 && y === 0 ? 1 : 2;
      const sum = [0, 0, 0];
      for (let j = 0; j < height; j++) {
        const fy = Math.cos((Math.PI * y * j) / height);
        for (let i = 0; i < width; i++) {
          const basis = norm * Math.cos((Math.PI * x * i) / width) * fy;
          const at = (j * width + i) * 3;
          sum[0] += basis * linear[at];
          sum[1] += basis * linear[at + 1];
          sum[2] += basis * linear[at + 2];
        }
      }
      factors.push(sum.map((v) => v / (width * height)));
    }
  }
  const [dc, ...ac] = factors;
  let hash = base83(cx - 1 + (cy - 1) * 9, 1);
  let maximum = 1;
  if (ac.length) {
    const actual = Math.max(...ac.flat().map(Math.abs));
    const quantised = Math.floor(Math.max(0, Math.min(82, Math.floor(actual * 166 - 0.5))));
    maximum = (quantised + 1) / 166;
    hash += base83(quantised, 1);
  } else {
    hash += base83(0, 1);
  }
  hash += base83((toSRGB(dc[0]) << 16) + (toSRGB(dc[1]) << 8) + toSRGB(dc[2]), 4);
  for (const factor of ac) {
    const [r, g, b] = factor.map((v) => Math.floor(Math.max(0, Math.min(18, Math.floor(signPow(v / maximum, 0.5) * 9 + 9.5)))));
    hash += base83(r * 19 * 19 + g * 19 + b, 2);
  }
  return hash;
}

/** The average colour a BlurHash encodes, as CSS (`rgb(…)`), or null for something that is not one. */
export function averageColour(hash) {
  if (typeof hash !== "string" || hash.length < 6) return null;
  let value = 0;
  for (const char of hash.slice(2, 6)) {
    const digit = DIGITS.indexOf(char);
    if (digit < 0) return null;
    value = value * 83 + digit;
  }
  return `rgb(${value >> 16} ${(value >> 8) & 255} ${value & 255})`;
}
