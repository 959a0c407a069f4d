// RESP: our reply type, command encoding, and a reader over hiredis's RESP parser.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::detail {

/// One decoded server reply (RESP2).
struct Reply {
    enum class Type { nil, integer, string, status, error, array };
    Type type = Type::nil;
    long long integer = 0;
    std::string str;              // string, status and error text
    std::vector<Reply> elements;  // array

    bool is_error() const { return type == Type::error; }
    bool is_nil() const { return type == Type::nil; }
};

/// Appends the RESP encoding of argv (binary-safe) to out.
void encode_command(std::string& out, const std::vector<std::string_view>& argv);

/// Incremental RESP decoder: feed bytes, take complete replies.
class RespReader {
  public:
    RespReader();
    ~RespReader();
    RespReader(const RespReader&) = delete;
    RespReader& operator=(const RespReader&) = delete;

    void feed(const char* data, std::size_t n);
    /// Next complete reply; nullopt when more bytes are needed. Throws std::runtime_error
    /// with the reader's message when the stream is not valid RESP.
    std::optional<Reply> next();
    /// Drops all buffered bytes (after the connection is reset).
    void reset();

  private:
    void* reader_;  // redisReader*, kept opaque so this header stays hiredis-free
};

}  // namespace deadbolt::detail
