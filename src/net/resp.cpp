#include "net/resp.hpp"

#include <hiredis/hiredis.h>

#include <stdexcept>

namespace deadbolt::detail {
namespace {

redisReader* R(void* p) {
    return static_cast<redisReader*>(p);
}

Reply convert(const redisReply* r) {
    Reply out;
    switch (r->type) {
        case REDIS_REPLY_STRING:
            out.type = Reply::Type::string;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_STATUS:
            out.type = Reply::Type::status;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            out.type = Reply::Type::error;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_INTEGER:
            out.type = Reply::Type::integer;
            out.integer = r->integer;
            break;
        case REDIS_REPLY_ARRAY:
            out.type = Reply::Type::array;
            out.elements.reserve(r->elements);
            for (std::size_t i = 0; i < r->elements; ++i)
                out.elements.push_back(convert(r->element[i]));
            break;
        default:
            out.type = Reply::Type::nil;
    }
    return out;
}

}  // namespace

void encode_command(std::string& out, const std::vector<std::string_view>& argv) {
    constexpr std::size_t kInline = 16;
    const char* ptrs_small[kInline];
    std::size_t lens_small[kInline];
    std::vector<const char*> ptrs_big;
    std::vector<std::size_t> lens_big;
    const char** ptrs = ptrs_small;
    std::size_t* lens = lens_small;
    if (argv.size() > kInline) {
        ptrs_big.resize(argv.size());
        lens_big.resize(argv.size());
        ptrs = ptrs_big.data();
        lens = lens_big.data();
    }
    for (std::size_t i = 0; i < argv.size(); ++i) {
        ptrs[i] = argv[i].data();
        lens[i] = argv[i].size();
    }
    char* cmd = nullptr;
    int n = redisFormatCommandArgv(&cmd, static_cast<int>(argv.size()), ptrs, lens);
    if (n < 0 || cmd == nullptr) throw std::bad_alloc();
    out.append(cmd, static_cast<std::size_t>(n));
    redisFreeCommand(cmd);
}

RespReader::RespReader() : reader_(redisReaderCreate()) {
    if (!reader_) throw std::bad_alloc();
}

RespReader::~RespReader() {
    redisReaderFree(R(reader_));
}

void RespReader::feed(const char* data, std::size_t n) {
    if (redisReaderFeed(R(reader_), data, n) != REDIS_OK) throw std::bad_alloc();
}

std::optional<Reply> RespReader::next() {
    void* raw = nullptr;
    if (redisReaderGetReply(R(reader_), &raw) != REDIS_OK)
        throw std::runtime_error(std::string("invalid RESP from server: ") + R(reader_)->errstr);
    if (!raw) return std::nullopt;
    Reply out = convert(static_cast<redisReply*>(raw));
    freeReplyObject(raw);
    return out;
}

void RespReader::reset() {
    redisReaderFree(R(reader_));
    reader_ = redisReaderCreate();
    if (!reader_) throw std::bad_alloc();
}

}  // namespace deadbolt::detail
