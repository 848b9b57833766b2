/* The frame scanner and the event-stream parser (stream_frame.h). Byte-at-a-time state
 * machines: a frame arrives in pieces of any size (a WebSocket fragment, a TCP read, a chunk),
 * and keeping a copy of each frame until it is complete would cost a buffer per stream. */

#include "load/stream_frame.h"

#include <string.h>

enum {
    FM_START = 0, /* before the top-level value */
    FM_KEY_WAIT,  /* in the object: a member name or '}' */
    FM_KEY,       /* in a member name */
    FM_KEY_ESC,   /* after a backslash in a member name */
    FM_COLON,     /* after a member name that is not ours */
    FM_COLON_OURS,
    FM_VALUE,   /* after our member's ':' */
    FM_NUM,     /* reading our number */
    FM_NUM_STR, /* reading our number written as a string */
    FM_SKIP,    /* skipping another member's value */
    FM_FOUND,
    FM_NONE /* the frame cannot match any more */
};

static int is_ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

void frame_match_init(struct frame_match *m)
{
    memset(m, 0, sizeof(*m));
}

static void digit(struct frame_match *m, char ch)
{
    if (m->digits >= FRAME_SEQ_MAX_DIGITS) {
        m->st = FM_NONE;
        return;
    }
    m->value = m->value * 10 + (uint64_t)(ch - '0');
    m->digits++;
}

/* One byte while skipping a value of another member: strings and nesting are followed so that
 * a ',' or '}' inside them does not end the value. */
static void skip_byte(struct frame_match *m, char ch)
{
    if (m->in_str) {
        if (m->in_str & 2)
            m->in_str = 1;
        else if (ch == '\\')
            m->in_str = 3;
        else if (ch == '"')
            m->in_str = 0;
        return;
    }
    switch (ch) {
    case '"':
        m->in_str = 1;
        break;
    case '{':
    case '[':
        if (m->depth == UINT8_MAX)
            m->st = FM_NONE; /* deeper than any frame a server means to send */
        else
            m->depth++;
        break;
    case '}':
    case ']':
        if (m->depth == 0)
            m->st = FM_NONE; /* the top-level object ended without our member */
        else
            m->depth--;
        break;
    case ',':
        if (m->depth == 0)
            m->st = FM_KEY_WAIT;
        break;
    default:
        break;
    }
}

void frame_match_feed(struct frame_match *m, const char *key, size_t keylen, const char *buf,
                      size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char ch = buf[i];
        switch (m->st) {
        case FM_START:
            if (ch == '{')
                m->st = FM_KEY_WAIT;
            else if (!is_ws(ch))
                m->st = FM_NONE;
            break;
        case FM_KEY_WAIT:
            if (ch == '"') {
                m->st = FM_KEY;
                m->kpos = 0;
                m->key_ok = 1;
            } else if (!is_ws(ch)) {
                m->st = FM_NONE; /* '}' (no member of ours) or not JSON */
            }
            break;
        case FM_KEY:
            if (ch == '"') {
                m->st = m->key_ok && m->kpos == keylen ? FM_COLON_OURS : FM_COLON;
            } else if (ch == '\\') {
                m->st = FM_KEY_ESC;
                m->key_ok = 0; /* an escaped name is never ours: ours need no escapes */
            } else if (m->key_ok && m->kpos < keylen && ch == key[m->kpos]) {
                m->kpos++;
            } else {
                m->key_ok = 0;
            }
            break;
        case FM_KEY_ESC:
            m->st = FM_KEY;
            break;
        case FM_COLON:
        case FM_COLON_OURS:
            if (ch == ':') {
                m->st = m->st == FM_COLON_OURS ? FM_VALUE : FM_SKIP;
                m->depth = 0;
                m->in_str = 0;
            } else if (!is_ws(ch)) {
                m->st = FM_NONE;
            }
            break;
        case FM_VALUE:
            if (ch >= '0' && ch <= '9') {
                m->st = FM_NUM;
                digit(m, ch);
            } else if (ch == '"') {
                m->st = FM_NUM_STR;
            } else if (!is_ws(ch)) {
                m->st = FM_NONE; /* our member, but not a whole number */
            }
            break;
        case FM_NUM:
            if (ch >= '0' && ch <= '9')
                digit(m, ch);
            else if (ch == '.' || ch == 'e' || ch == 'E')
                m->st = FM_NONE;
            else
                m->st = FM_FOUND;
            break;
        case FM_NUM_STR:
            if (ch >= '0' && ch <= '9')
                digit(m, ch);
            else
                m->st = ch == '"' && m->digits ? FM_FOUND : FM_NONE;
            break;
        case FM_SKIP:
            skip_byte(m, ch);
            break;
        default:
            return; /* FM_FOUND, FM_NONE: the rest of the frame changes nothing */
        }
    }
}

int frame_match_result(const struct frame_match *m, uint64_t *seq)
{
    /* A frame that ends right after the digits ("{\"seq\":42") still names its command. */
    if (m->st == FM_FOUND || (m->st == FM_NUM && m->digits)) {
        *seq = m->value;
        return 1;
    }
    return 0;
}

/* ---- text/event-stream ------------------------------------------------------------------ */

enum {
    SP_LINE_START = 0, /* at the start of a line */
    SP_NAME,           /* reading a field name */
    SP_VALUE_START,    /* after the ':' (one space is dropped) */
    SP_VALUE,          /* reading a value */
    SP_COMMENT         /* a ':' line, or a field we ignore */
};

static const char data_name[] = "data";

void sse_parser_init(struct sse_parser *p)
{
    memset(p, 0, sizeof(*p));
    frame_match_init(&p->m);
}

static void dispatch(struct sse_parser *p, sse_event_fn on_event, void *ud)
{
    uint64_t seq = 0;
    if (p->has_data) {
        int matched = frame_match_result(&p->m, &seq);
        on_event(ud, matched, seq, p->bytes);
    }
    p->has_data = 0;
    p->bytes = 0;
    frame_match_init(&p->m);
}

/* A data line begins (its name was "data"): a second one joins the first with LF. */
static int data_begin(struct sse_parser *p, const char *key, size_t keylen, uint64_t max_event)
{
    if (p->has_data) {
        if (++p->bytes > max_event)
            return SSE_TOO_BIG;
        frame_match_feed(&p->m, key, keylen, "\n", 1);
    }
    p->has_data = 1;
    return SSE_OK;
}

/* The end of a line: a blank one dispatches the event; a field name alone ("data") is that
 * field with an empty value. */
static int line_end(struct sse_parser *p, const char *key, size_t keylen, uint64_t max_event,
                    sse_event_fn on_event, void *ud)
{
    int rc = SSE_OK;
    if (p->st == SP_LINE_START)
        dispatch(p, on_event, ud);
    else if (p->st == SP_NAME && p->fpos == sizeof(data_name) - 1 && p->is_data)
        rc = data_begin(p, key, keylen, max_event);
    p->st = SP_LINE_START;
    p->fpos = 0;
    p->is_data = 0;
    return rc;
}

int sse_parser_feed(struct sse_parser *p, const char *key, size_t keylen, uint64_t max_event,
                    const char *buf, size_t len, sse_event_fn on_event, void *ud)
{
    size_t i = 0;
    while (i < len) {
        char ch = buf[i];
        if (ch == '\n' && p->prev_cr) {
            p->prev_cr = 0; /* the LF of a CRLF: the line already ended at the CR */
            i++;
            continue;
        }
        p->prev_cr = ch == '\r';
        if (ch == '\r' || ch == '\n') {
            if (line_end(p, key, keylen, max_event, on_event, ud) != SSE_OK)
                return SSE_TOO_BIG;
            i++;
            continue;
        }
        switch (p->st) {
        case SP_LINE_START:
            if (ch == ':') {
                p->st = SP_COMMENT;
                break;
            }
            p->st = SP_NAME;
            p->is_data = 1;
            p->fpos = 0;
            /* This byte is the name's first. */
            __attribute__((fallthrough));
        case SP_NAME:
            if (ch == ':') {
                p->is_data = p->is_data && p->fpos == sizeof(data_name) - 1;
                if (p->is_data && data_begin(p, key, keylen, max_event) != SSE_OK)
                    return SSE_TOO_BIG;
                p->st = p->is_data ? SP_VALUE_START : SP_COMMENT;
            } else {
                if (p->fpos >= sizeof(data_name) - 1 || ch != data_name[p->fpos])
                    p->is_data = 0;
                if (p->fpos < UINT8_MAX)
                    p->fpos++;
            }
            break;
        case SP_VALUE_START:
            p->st = SP_VALUE;
            if (ch == ' ')
                break;
            __attribute__((fallthrough));
        case SP_VALUE: {
            /* The rest of the value up to the line's end, in one piece. */
            size_t n = 1;
            while (i + n < len && buf[i + n] != '\r' && buf[i + n] != '\n')
                n++;
            if (n > max_event || p->bytes + n > max_event)
                return SSE_TOO_BIG;
            p->bytes += n;
            frame_match_feed(&p->m, key, keylen, buf + i, n);
            i += n;
            continue;
        }
        default: /* SP_COMMENT */
            break;
        }
        i++;
    }
    return SSE_OK;
}
