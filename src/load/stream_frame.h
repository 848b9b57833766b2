#ifndef SIZEUP_LOAD_STREAM_FRAME_H
#define SIZEUP_LOAD_STREAM_FRAME_H

/* What a stream receives, read as it arrives and never kept: a frame is scanned fragment by
 * fragment for the command number it carries (frame_match), and an event stream is split into
 * its events (sse_parser). Both hold a few bytes of state per stream, whatever the frame's
 * size, so 10,000 streams cost no more than their sockets and a 16 MiB frame no more than a
 * small one. Both parse outside input: every byte sequence is accepted or rejected without
 * reading past what was given. */

#include <stddef.h>
#include <stdint.h>

/* A longer number is not a command number (and cannot overflow 64 bits). */
#define FRAME_SEQ_MAX_DIGITS 18

/* Finds the member named key at the top level of a JSON object and reads its value as a
 * non-negative integer (a number such as 42, or a string of digits such as "42"). Nested
 * objects, arrays and strings are skipped, so {"a":{"seq":1},"seq":2} gives 2. */
struct frame_match {
    uint8_t st;
    uint8_t kpos;   /* bytes of the key matched so far */
    uint8_t key_ok; /* the current member name still matches */
    uint8_t in_str; /* skipping: inside a string (bit 0), after a backslash (bit 1) */
    uint8_t depth;  /* skipping: nesting below the top-level object */
    uint8_t digits;
    uint64_t value;
};

/* Starts a new frame. */
void frame_match_init(struct frame_match *m);

/* Feeds the next len bytes of the frame; key (keylen bytes, at most 255) is borrowed for the
 * call and must be the same for every call on one frame. */
void frame_match_feed(struct frame_match *m, const char *key, size_t keylen, const char *buf,
                      size_t len);

/* After the frame's last bytes: 1 and *seq when the member was found with an integer value,
 * else 0. */
int frame_match_result(const struct frame_match *m, uint64_t *seq /* OUT */);

/* One dispatched event of an event stream: its data's match result and its size in bytes
 * (the data lines' values, without the field names and line ends). */
typedef void (*sse_event_fn)(void *ud, int matched, uint64_t seq, uint64_t bytes);

enum { SSE_OK = 0, SSE_TOO_BIG = -1 };

/* A text/event-stream parser (the WHATWG HTML "server-sent events" rules): lines end with
 * CRLF, LF or CR; "data:" lines join with LF into the event's data; a blank line dispatches
 * an event that has data; comments (":...") and other fields (event, id, retry) are read and
 * ignored. */
struct sse_parser {
    uint8_t st;
    uint8_t fpos;     /* bytes of the field name read */
    uint8_t is_data;  /* the current line is a data line */
    uint8_t prev_cr;  /* the last byte was CR: a following LF belongs to the same line end */
    uint8_t has_data; /* the event being built has data */
    uint64_t bytes;   /* data bytes of the event being built */
    struct frame_match m;
};

void sse_parser_init(struct sse_parser *p);

/* Feeds len bytes of the stream (borrows buf and key for the call); calls on_event for each
 * event completed. Returns SSE_OK, or SSE_TOO_BIG when an event's data grows past max_event
 * bytes (the stream should then be closed: nothing after it can be trusted to line up). */
int sse_parser_feed(struct sse_parser *p, const char *key, size_t keylen, uint64_t max_event,
                    const char *buf, size_t len, sse_event_fn on_event, void *ud);

#endif
