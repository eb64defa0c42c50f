// A strict little JSON reader for the probe tests: validates RFC 8259 syntax
// and keeps the document as a tree, so tests can look values up.
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace jsonc {

struct Value {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<Value> arr;
    std::vector<std::pair<std::string, Value>> obj;

    const Value *get(const std::string &key) const
    {
        for (const auto &kv : obj)
            if (kv.first == key) return &kv.second;
        return nullptr;
    }
};

class Parser {
public:
    explicit Parser(const std::string &text) : s_(text) {}

    // true if the whole text is exactly one JSON value (whitespace around)
    bool parse(Value &out, std::string &err)
    {
        ws();
        if (!value(out, 0)) { err = err_ + " at offset " + std::to_string(i_); return false; }
        ws();
        if (i_ != s_.size()) { err = "trailing text at offset " + std::to_string(i_); return false; }
        return true;
    }

private:
    const std::string s_;
    size_t i_ = 0;
    std::string err_;

    bool fail(const char *why) { err_ = why; return false; }
    void ws() { while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_; }
    bool lit(const char *w)
    {
        size_t n = std::char_traits<char>::length(w);
        if (s_.compare(i_, n, w) != 0) return false;
        i_ += n;
        return true;
    }

    bool value(Value &v, int depth)
    {
        if (depth > 64) return fail("too deep");
        if (i_ >= s_.size()) return fail("unexpected end");
        char c = s_[i_];
        if (c == '{') return object(v, depth);
        if (c == '[') return array(v, depth);
        if (c == '"') { v.kind = Value::String; return string(v.str); }
        if (lit("true")) { v.kind = Value::Bool; v.b = true; return true; }
        if (lit("false")) { v.kind = Value::Bool; v.b = false; return true; }
        if (lit("null")) { v.kind = Value::Null; return true; }
        return number(v);
    }

    bool number(Value &v)
    {
        size_t st = i_;
        if (i_ < s_.size() && s_[i_] == '-') ++i_;
        if (i_ >= s_.size() || !isdigit((unsigned char)s_[i_])) return fail("bad value");
        if (s_[i_] == '0') ++i_;
        else while (i_ < s_.size() && isdigit((unsigned char)s_[i_])) ++i_;
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            if (i_ >= s_.size() || !isdigit((unsigned char)s_[i_])) return fail("bad fraction");
            while (i_ < s_.size() && isdigit((unsigned char)s_[i_])) ++i_;
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            if (i_ >= s_.size() || !isdigit((unsigned char)s_[i_])) return fail("bad exponent");
            while (i_ < s_.size() && isdigit((unsigned char)s_[i_])) ++i_;
        }
        v.kind = Value::Number;
        v.num = std::strtod(s_.c_str() + st, nullptr);
        return true;
    }

    bool string(std::string &out)
    {
        ++i_;   // opening quote
        while (i_ < s_.size()) {
            unsigned char c = (unsigned char)s_[i_++];
            if (c == '"') return true;
            if (c < 0x20) return fail("control character in string");
            if (c == '\\') {
                if (i_ >= s_.size()) return fail("bad escape");
                char e = s_[i_++];
                if (e == 'u') {
                    for (int k = 0; k < 4; ++k)
                        if (i_ >= s_.size() || !isxdigit((unsigned char)s_[i_++])) return fail("bad \\u");
                    out += '?';
                } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
                    return fail("bad escape");
                } else {
                    out += e;
                }
            } else {
                out += (char)c;
            }
        }
        return fail("unterminated string");
    }

    bool array(Value &v, int depth)
    {
        v.kind = Value::Array;
        ++i_;
        ws();
        if (i_ < s_.size() && s_[i_] == ']') { ++i_; return true; }
        for (;;) {
            ws();
            v.arr.emplace_back();
            if (!value(v.arr.back(), depth + 1)) return false;
            ws();
            if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
            if (i_ < s_.size() && s_[i_] == ']') { ++i_; return true; }
            return fail("expected , or ]");
        }
    }

    bool object(Value &v, int depth)
    {
        v.kind = Value::Object;
        ++i_;
        ws();
        if (i_ < s_.size() && s_[i_] == '}') { ++i_; return true; }
        for (;;) {
            ws();
            if (i_ >= s_.size() || s_[i_] != '"') return fail("expected key");
            std::string key;
            if (!string(key)) return false;
            for (const auto &kv : v.obj)
                if (kv.first == key) return fail("duplicate key");
            ws();
            if (i_ >= s_.size() || s_[i_] != ':') return fail("expected :");
            ++i_;
            ws();
            v.obj.emplace_back(key, Value());
            if (!value(v.obj.back().second, depth + 1)) return false;
            ws();
            if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
            if (i_ < s_.size() && s_[i_] == '}') { ++i_; return true; }
            return fail("expected , or }");
        }
    }
};

} // namespace jsonc
