// FrameLog: a replication stream's backlog — its last frames, numbered by offset from 1, in one
// byte buffer (a frame costs no allocation of its own; the buffer is compacted once its dropped
// front outgrows the rest), so that a replica that reconnects continues from where it stopped.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace ringkv::cluster {

class FrameLog {
 public:
  uint64_t first() const { return first_; }  // the offset of the oldest frame kept
  bool empty() const { return sizes_.empty(); }
  size_t bytes() const { return bytes_.size() - head_; }  // what the kept frames hold
  // Appends the next offset's frame, then drops the oldest frames while more than
  // `limit` bytes are kept (the newest one stays whatever its size).
  void push(std::string_view frame, size_t limit) {
    bytes_.append(frame);
    sizes_.push_back(static_cast<uint32_t>(frame.size()));
    while (bytes_.size() - head_ > limit && sizes_.size() > 1) {
      head_ += sizes_.front();
      sizes_.pop_front();
      first_++;
    }
    if (head_ > 4096 && head_ > bytes_.size() / 2) {
      bytes_.erase(0, head_);
      head_ = 0;
    }
  }
  // Calls `fn(offset, frame)` for each frame kept from offset `from` on, oldest first, while it
  // returns true.
  template <typename Fn>
  void for_each_from(uint64_t from, Fn fn) const {
    size_t at = head_;
    for (size_t k = 0; k < sizes_.size(); ++k) {
      const uint64_t offset = first_ + k;
      if (offset >= from && !fn(offset, std::string_view(bytes_).substr(at, sizes_[k]))) return;
      at += sizes_[k];
    }
  }

 private:
  std::string bytes_;
  size_t head_ = 0;  // where the oldest frame kept starts in bytes_
  std::deque<uint32_t> sizes_;
  uint64_t first_ = 1;
};

}  // namespace ringkv::cluster
