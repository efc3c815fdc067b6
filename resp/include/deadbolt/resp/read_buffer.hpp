// A fixed-capacity byte buffer between a socket and the decoder.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace deadbolt::resp {

/// Bytes arrive at the back (prepare + commit), nodes are consumed from the front. Memory is allocated
/// once, at construction; unread bytes are moved to the front only when the free tail is too small.
/// Size the capacity for the largest node the decoder accepts (limits::max_bulk_length plus headers).
class read_buffer {
 public:
  explicit read_buffer(std::size_t capacity)
      : data_(new char[capacity]), capacity_(capacity) {}

  /// The unread bytes.
  std::string_view unread() const noexcept { return {data_.get() + begin_, end_ - begin_}; }

  /// Drops `n` bytes from the front (n <= unread().size()).
  void consume(std::size_t n) noexcept {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }

  /// Writable space at the back, after compacting if that yields more. Empty when the buffer is full
  /// of unread bytes: a node larger than the capacity cannot be decoded.
  char* prepare(std::size_t& available) noexcept {
    if (begin_ > 0 && capacity_ - end_ < capacity_ / 2) {
      std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    available = capacity_ - end_;
    return data_.get() + end_;
  }

  /// Marks `n` prepared bytes as written.
  void commit(std::size_t n) noexcept { end_ += n; }

  bool full() const noexcept { return begin_ == 0 && end_ == capacity_; }
  std::size_t capacity() const noexcept { return capacity_; }
  void clear() noexcept { begin_ = end_ = 0; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace deadbolt::resp
