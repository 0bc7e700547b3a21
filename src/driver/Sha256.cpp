//===- Sha256.cpp - SHA-256 (FIPS 180-4) of a file -------------------------===//
#include "bundlefit/driver/Sha256.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <vector>

namespace bundlefit {

namespace {

constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotateRight(uint32_t value, int bits) { return (value >> bits) | (value << (32 - bits)); }

class Sha256 {
public:
  void update(const uint8_t *data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      block_[blockUsed_++] = data[i];
      if (blockUsed_ == 64) {
        compress();
        blockUsed_ = 0;
      }
    }
    totalBytes_ += size;
  }

  std::string hexDigest() {
    const uint64_t totalBits = totalBytes_ * 8;
    const uint8_t one = 0x80, zero = 0;
    update(&one, 1);
    while (blockUsed_ != 56)
      update(&zero, 1);
    uint8_t length[8];
    for (int i = 0; i < 8; ++i)
      length[i] = uint8_t(totalBits >> (56 - 8 * i));
    update(length, 8);
    std::string hex;
    char byte[3];
    for (uint32_t word : state_)
      for (int shift = 24; shift >= 0; shift -= 8) {
        std::snprintf(byte, sizeof byte, "%02x", unsigned((word >> shift) & 0xff));
        hex += byte;
      }
    return hex;
  }

private:
  void compress() {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(block_[4 * i]) << 24 | uint32_t(block_[4 * i + 1]) << 16 |
             uint32_t(block_[4 * i + 2]) << 8 | uint32_t(block_[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotateRight(w[i - 15], 7) ^ rotateRight(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotateRight(w[i - 2], 17) ^ rotateRight(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3], e = state_[4],
             f = state_[5], g = state_[6], h = state_[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t s1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25);
      uint32_t choose = (e & f) ^ (~e & g);
      uint32_t t1 = h + s1 + choose + kRoundConstants[i] + w[i];
      uint32_t s0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22);
      uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
      uint32_t t2 = s0 + majority;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
  }

  std::array<uint32_t, 8> state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t block_[64] = {};
  size_t blockUsed_ = 0;
  uint64_t totalBytes_ = 0;
};

} // namespace

std::string sha256Hex(const uint8_t *data, size_t size) {
  Sha256 hash;
  hash.update(data, size);
  return hash.hexDigest();
}

std::string sha256OfFile(const std::string &path) {
  checkInputFile(path, "model");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ExitCode::BadInputFile, path + ": cannot read file");
  Sha256 hash;
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), std::streamsize(chunk.size()));
    hash.update(reinterpret_cast<const uint8_t *>(chunk.data()), size_t(in.gcount()));
  }
  if (in.bad())
    throw Error(ExitCode::BadInputFile, path + ": cannot read file");
  return hash.hexDigest();
}

} // namespace bundlefit
