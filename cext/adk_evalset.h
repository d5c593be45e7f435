/* ADK EvalSet files read for their tool uses, without a Python object per invocation.
 *
 * rv_adk_read walks the text of an EvalSet file (``{eval_set_id, eval_cases: [{eval_id,
 * conversation: [invocation, ...]}]}``, snake_case or camelCase below the top level) on the
 * one JSON scanner (json_scan.h) and writes, per case in file order, its id and kind
 * (conversation or conversation_scenario) and the range of its invocations, and per
 * invocation its id and where its ``intermediate_data.tool_uses`` list stands in the text
 * (start and end, -1 when there is none): the trajectory reader reads the calls from the
 * file's bytes in place (respeval._tool_calls.JsonSpans), nothing is copied.
 *
 * It answers RV_ADK_OK only for a file respeval.agents.load_eval_set certainly reads, and
 * reads as written here: valid UTF-8 and JSON as json.loads reads it (the scanner's
 * checked skip: no NaN or Infinity, integers of at most RV_JSON_MAX_INT_DIGITS digits,
 * nesting below RV_JSON_MAX_DEPTH), no escape that may make a lone surrogate (the readers'
 * pre-filter, ``\u[dD][89a-fA-F]`` anywhere), every field the loader checks of the shape
 * it accepts, no field the walk reads given twice in one object (in either spelling), no
 * ``invocation_events`` (the newer form: calls inside events), and string ids.  Anything
 * else is RV_ADK_FALLBACK: the caller reads the file with the Python loader, which gives
 * its result or its error (naming file, case and field) exactly.  The calls inside a
 * tool-use list are not looked at here: the trajectory reader refuses what the loader
 * refuses.  Twin: src/respeval/_core_py/adk.py.
 */
#ifndef RESPEVAL_ADK_EVALSET_H
#define RESPEVAL_ADK_EVALSET_H

#include <stdint.h>
#include <string.h>

#include "buffer.h"
#include "json_scan.h"

enum { RV_ADK_OK = 0, RV_ADK_FALLBACK = 1, RV_ADK_NOMEM = -1 };

typedef struct {
    rv_i64buf case_id_off; /* n_cases + 1 offsets into case_ids */
    rv_tbuf case_ids;      /* the decoded ids, UTF-8, back to back */
    rv_tbuf case_kinds;    /* 'c' conversation, 's' conversation_scenario */
    rv_i64buf case_first;  /* n_cases + 1: case k's invocations are case_first[k] .. case_first[k + 1] */
    rv_i64buf inv_id_off;  /* n_invocations + 1 offsets into inv_ids */
    rv_tbuf inv_ids;
    rv_i64buf tool_start, tool_end; /* each invocation's tool-use list: s[start:end]; -1: none */
    rv_tbuf key;        /* scratch: a key with escapes, decoded */
} rv_adk;

static inline void rv_adk_free(rv_adk *a) {
    rv_buf_free(&a->case_id_off);
    rv_buf_free(&a->case_ids);
    rv_buf_free(&a->case_kinds);
    rv_buf_free(&a->case_first);
    rv_buf_free(&a->inv_id_off);
    rv_buf_free(&a->inv_ids);
    rv_buf_free(&a->tool_start);
    rv_buf_free(&a->tool_end);
    rv_buf_free(&a->key);
}

/* Whether s[0:n] holds \u followed by d or D and one of 89abcdefABCDEF: the readers'
 * pre-filter for lone surrogates (respeval.io.readers._SURROGATE_ESCAPE). */
static inline int rv_adk_surrogate_escape(const char *s, int64_t n) {
    const char *p = s, *end = s + n;
    while (end - p >= 4) {
        const char *b = (const char *)memchr(p, '\\', (size_t)(end - p - 3));
        if (b == NULL) return 0;
        char d = b[2], h = b[3];
        if (b[1] == 'u' && (d == 'd' || d == 'D') &&
            ((h >= '8' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
            return 1;
        p = b + 1;
    }
    return 0;
}

/* The fields the walk reads; each object kind has its own names (snake_case, and where
 * the loader reads both, camelCase: its _get). */
enum {
    RV_ADK_OTHER = -1,
    /* the top level */
    RV_ADK_SET_ID = 0,
    RV_ADK_CASES,
    /* an eval case */
    RV_ADK_EVAL_ID = 0,
    RV_ADK_CONVERSATION,
    RV_ADK_SCENARIO,
    RV_ADK_SESSION,
    RV_ADK_CASE_RUBRICS,
    /* an invocation */
    RV_ADK_INV_ID = 0,
    RV_ADK_USER,
    RV_ADK_FINAL,
    RV_ADK_INTER,
    RV_ADK_INV_RUBRICS,
    RV_ADK_DURATION,
    RV_ADK_MODEL_DURATION,
    RV_ADK_TOOL_DURATION,
    /* intermediate_data */
    RV_ADK_TOOL_USES = 0,
    RV_ADK_TOOL_RESPONSES,
    RV_ADK_INTER_RESPONSES,
    RV_ADK_EVENTS,
    /* session_input */
    RV_ADK_APP_NAME = 0,
    RV_ADK_USER_ID,
};

typedef struct {
    const char *name;
    int64_t len;
    int field;
} rv_adk_name;
#define RV_ADK_NAME(text, field) {text, sizeof(text) - 1, field}

static const rv_adk_name rv_adk_top_names[] = {RV_ADK_NAME("eval_set_id", RV_ADK_SET_ID), RV_ADK_NAME("eval_cases", RV_ADK_CASES), {NULL, 0, 0}};
static const rv_adk_name rv_adk_case_names[] = {
    RV_ADK_NAME("eval_id", RV_ADK_EVAL_ID),          RV_ADK_NAME("evalId", RV_ADK_EVAL_ID),
    RV_ADK_NAME("conversation", RV_ADK_CONVERSATION), RV_ADK_NAME("conversation_scenario", RV_ADK_SCENARIO),
    RV_ADK_NAME("conversationScenario", RV_ADK_SCENARIO), RV_ADK_NAME("session_input", RV_ADK_SESSION),
    RV_ADK_NAME("sessionInput", RV_ADK_SESSION),     RV_ADK_NAME("rubrics", RV_ADK_CASE_RUBRICS),
    {NULL, 0, 0}};
static const rv_adk_name rv_adk_inv_names[] = {
    RV_ADK_NAME("invocation_id", RV_ADK_INV_ID),       RV_ADK_NAME("invocationId", RV_ADK_INV_ID),
    RV_ADK_NAME("user_content", RV_ADK_USER),          RV_ADK_NAME("userContent", RV_ADK_USER),
    RV_ADK_NAME("final_response", RV_ADK_FINAL),       RV_ADK_NAME("finalResponse", RV_ADK_FINAL),
    RV_ADK_NAME("intermediate_data", RV_ADK_INTER),    RV_ADK_NAME("intermediateData", RV_ADK_INTER),
    RV_ADK_NAME("rubrics", RV_ADK_INV_RUBRICS),        RV_ADK_NAME("duration", RV_ADK_DURATION),
    RV_ADK_NAME("model_duration", RV_ADK_MODEL_DURATION), RV_ADK_NAME("modelDuration", RV_ADK_MODEL_DURATION),
    RV_ADK_NAME("tool_duration", RV_ADK_TOOL_DURATION), RV_ADK_NAME("toolDuration", RV_ADK_TOOL_DURATION),
    {NULL, 0, 0}};
static const rv_adk_name rv_adk_inter_names[] = {
    RV_ADK_NAME("tool_uses", RV_ADK_TOOL_USES),
    RV_ADK_NAME("toolUses", RV_ADK_TOOL_USES),
    RV_ADK_NAME("tool_responses", RV_ADK_TOOL_RESPONSES),
    RV_ADK_NAME("toolResponses", RV_ADK_TOOL_RESPONSES),
    RV_ADK_NAME("intermediate_responses", RV_ADK_INTER_RESPONSES),
    RV_ADK_NAME("intermediateResponses", RV_ADK_INTER_RESPONSES),
    RV_ADK_NAME("invocation_events", RV_ADK_EVENTS),
    RV_ADK_NAME("invocationEvents", RV_ADK_EVENTS),
    {NULL, 0, 0}};
static const rv_adk_name rv_adk_session_names[] = {
    RV_ADK_NAME("app_name", RV_ADK_APP_NAME), RV_ADK_NAME("appName", RV_ADK_APP_NAME), RV_ADK_NAME("user_id", RV_ADK_USER_ID), RV_ADK_NAME("userId", RV_ADK_USER_ID),
    {NULL, 0, 0}};
static const rv_adk_name rv_adk_content_names[] = {RV_ADK_NAME("parts", 0), {NULL, 0, 0}};

#define RV_ADK_TRY(x)               \
    do {                            \
        int rv_adk_r_ = (x);        \
        if (rv_adk_r_ != 0) return rv_adk_r_; \
    } while (0)
#define RV_ADK_NEED(cond)                          \
    do {                                           \
        if (!(cond)) return RV_ADK_FALLBACK;        \
    } while (0)

/* The object member key at c->s[c->i] (past it, and past the ':' after it): its field in
 * `names`, or RV_ADK_OTHER; RV_ADK_KEY_BAD when the text is not a key, RV_ADK_KEY_NOMEM.
 * A key with escapes is decoded first (json.loads compares decoded keys). */
enum { RV_ADK_KEY_BAD = -2, RV_ADK_KEY_NOMEM = -3 };
static int rv_adk_key(rv_jcur *c, rv_adk *a, const rv_adk_name *names) {
    int64_t start = 0, len = 0;
    const char *k;
    if (c->i >= c->n || c->s[c->i] != '"') return RV_ADK_KEY_BAD;
    int r = rv_json_raw_string(c, 1, &start, &len);
    if (r == RV_JSON_RAW) {
        k = c->s + start;
    } else if (r == RV_JSON_ESCAPED) {
        a->key.n = 0;
        r = rv_json_decode_string(c, 1, &a->key);
        if (r < 0) return RV_ADK_KEY_NOMEM;
        if (r != RV_JSON_RAW) return RV_ADK_KEY_BAD;
        k = a->key.data;
        len = a->key.n;
    } else {
        return RV_ADK_KEY_BAD;
    }
    rv_json_ws(c);
    if (c->i >= c->n || c->s[c->i] != ':') return RV_ADK_KEY_BAD;
    c->i++;
    rv_json_ws(c);
    for (const rv_adk_name *e = names; e->name != NULL; e++) {
        if (e->len == len && memcmp(e->name, k, (size_t)len) == 0) return e->field;
    }
    return RV_ADK_OTHER;
}

/* A value of no interest at `depth`, checked and skipped. */
static inline int rv_adk_skip(rv_jcur *c, int depth) { return rv_json_skip(c, depth, 1) ? 0 : RV_ADK_FALLBACK; }

static inline int rv_adk_null(rv_jcur *c) { return rv_json_literal(c, "null", 4); }

/* After a member's value: 1 more members follow, 0 the object or array closed, or -1
 * (malformed). */
static inline int rv_adk_next(rv_jcur *c, char close) {
    rv_json_ws(c);
    if (c->i >= c->n) return -1;
    if (c->s[c->i] == ',') {
        c->i++;
        rv_json_ws(c);
        return 1;
    }
    if (c->s[c->i] == close) {
        c->i++;
        return 0;
    }
    return -1;
}

/* The opening bracket `open` at c->s[c->i]: 1 (past it; a first element follows), 0 (the
 * container is empty, and past it), or -1 (something else is there). */
static inline int rv_adk_open(rv_jcur *c, char open, int depth) {
    if (c->i >= c->n || c->s[c->i] != open || depth >= RV_JSON_MAX_DEPTH) return -1;
    c->i++;
    rv_json_ws(c);
    if (c->i < c->n && c->s[c->i] == (open == '{' ? '}' : ']')) {
        c->i++;
        return 0;
    }
    return 1;
}

/* Walks the members of the object at c->s[c->i] (at `depth`): for each, `member` is
 * called with the field the key names (names) and reads the value; a field seen twice is
 * RV_ADK_FALLBACK.  *seen: the fields met, a bit each.  `ctx`: the member function's. */
typedef int (*rv_adk_member_fn)(rv_jcur *c, rv_adk *a, int field, int depth, void *ctx);
static int rv_adk_object(rv_jcur *c, rv_adk *a, int depth, const rv_adk_name *names, rv_adk_member_fn member,
                         void *ctx, uint32_t *seen) {
    *seen = 0;
    int more = rv_adk_open(c, '{', depth);
    RV_ADK_NEED(more >= 0);
    while (more) {
        int field = rv_adk_key(c, a, names);
        if (field == RV_ADK_KEY_NOMEM) return RV_ADK_NOMEM;
        RV_ADK_NEED(field != RV_ADK_KEY_BAD);
        if (field == RV_ADK_OTHER) {
            RV_ADK_TRY(rv_adk_skip(c, depth + 1));
        } else {
            RV_ADK_NEED(!(*seen & (1u << field)));
            *seen |= 1u << field;
            RV_ADK_TRY(member(c, a, field, depth + 1, ctx));
        }
        more = rv_adk_next(c, '}');
        RV_ADK_NEED(more >= 0);
    }
    return RV_ADK_OK;
}

/* null, or a list whose every element `element` reads (at depth + 1). */
typedef int (*rv_adk_element_fn)(rv_jcur *c, rv_adk *a, int depth, void *ctx);
static int rv_adk_list(rv_jcur *c, rv_adk *a, int depth, rv_adk_element_fn element, void *ctx) {
    if (rv_adk_null(c)) return RV_ADK_OK;
    int more = rv_adk_open(c, '[', depth);
    RV_ADK_NEED(more >= 0);
    while (more) {
        RV_ADK_TRY(element(c, a, depth + 1, ctx));
        more = rv_adk_next(c, ']');
        RV_ADK_NEED(more >= 0);
    }
    return RV_ADK_OK;
}

/* An object, checked and skipped (the loader's _mapping of a value it keeps as it is). */
static int rv_adk_any_object(rv_jcur *c, rv_adk *a, int depth, void *ctx) {
    (void)a;
    (void)ctx;
    RV_ADK_NEED(c->i < c->n && c->s[c->i] == '{');
    return rv_adk_skip(c, depth);
}

/* null or a list, checked and skipped (rubrics). */
static int rv_adk_any_list(rv_jcur *c, int depth) {
    RV_ADK_NEED(c->i < c->n && (c->s[c->i] == '[' || c->s[c->i] == 'n'));
    return rv_adk_skip(c, depth);
}

/* A string decoded onto `out` (UTF-8): RV_ADK_OK, or RV_ADK_FALLBACK if it is not one. */
static int rv_adk_string(rv_jcur *c, rv_tbuf *out) {
    int64_t start = 0, len = 0;
    RV_ADK_NEED(c->i < c->n && c->s[c->i] == '"');
    int r = rv_json_raw_string(c, 1, &start, &len);
    if (r == RV_JSON_RAW) return rv_tbuf_put(out, c->s + start, len) ? RV_ADK_NOMEM : RV_ADK_OK;
    RV_ADK_NEED(r == RV_JSON_ESCAPED);
    r = rv_json_decode_string(c, 1, out);
    if (r < 0) return RV_ADK_NOMEM;
    return r == RV_JSON_RAW ? RV_ADK_OK : RV_ADK_FALLBACK;
}

/* ---- google-genai Content: {parts: null | [object, ...], ...} ---- */

static int rv_adk_content_member(rv_jcur *c, rv_adk *a, int field, int depth, void *ctx) {
    (void)field;
    return rv_adk_list(c, a, depth, rv_adk_any_object, ctx);
}

/* null, or a Content object. */
static int rv_adk_content(rv_jcur *c, rv_adk *a, int depth) {
    uint32_t seen;
    if (rv_adk_null(c)) return RV_ADK_OK;
    return rv_adk_object(c, a, depth, rv_adk_content_names, rv_adk_content_member, NULL, &seen);
}

/* ---- intermediate_data ---- */

typedef struct {
    int64_t tool_start, tool_end; /* the tool-use list's text; -1: none (null or absent) */
} rv_adk_inter_ctx;

/* intermediate_responses[k]: [author, parts] with parts null or a list of objects. */
static int rv_adk_inter_response(rv_jcur *c, rv_adk *a, int depth, void *ctx) {
    int more = rv_adk_open(c, '[', depth);
    RV_ADK_NEED(more == 1);
    RV_ADK_TRY(rv_adk_skip(c, depth + 1)); /* the author: any value (str() of it) */
    RV_ADK_NEED(rv_adk_next(c, ']') == 1);
    RV_ADK_TRY(rv_adk_list(c, a, depth + 1, rv_adk_any_object, ctx));
    RV_ADK_NEED(rv_adk_next(c, ']') == 0);
    return RV_ADK_OK;
}

static int rv_adk_inter_member(rv_jcur *c, rv_adk *a, int field, int depth, void *ctx) {
    rv_adk_inter_ctx *x = (rv_adk_inter_ctx *)ctx;
    switch (field) {
        case RV_ADK_TOOL_USES:
            if (rv_adk_null(c)) return RV_ADK_OK;
            RV_ADK_NEED(c->i < c->n && c->s[c->i] == '[');
            x->tool_start = c->i;
            RV_ADK_TRY(rv_adk_skip(c, depth));
            x->tool_end = c->i;
            return RV_ADK_OK;
        case RV_ADK_TOOL_RESPONSES:
            return rv_adk_list(c, a, depth, rv_adk_any_object, NULL);
        case RV_ADK_INTER_RESPONSES:
            return rv_adk_list(c, a, depth, rv_adk_inter_response, NULL);
        default: /* invocation_events: calls inside events, for the Python loader */
            return RV_ADK_FALLBACK;
    }
}

/* ---- an invocation ---- */

typedef struct {
    rv_adk_inter_ctx inter;
} rv_adk_inv_ctx;

static int rv_adk_inv_member(rv_jcur *c, rv_adk *a, int field, int depth, void *ctx) {
    rv_adk_inv_ctx *x = (rv_adk_inv_ctx *)ctx;
    uint32_t seen;
    switch (field) {
        case RV_ADK_INV_ID:
            /* str(value or ""): a string, or null (""); another type for the Python loader */
            if (rv_adk_null(c)) return RV_ADK_OK;
            return rv_adk_string(c, &a->inv_ids);
        case RV_ADK_USER:
        case RV_ADK_FINAL:
            return rv_adk_content(c, a, depth);
        case RV_ADK_INTER:
            if (rv_adk_null(c)) return RV_ADK_OK;
            return rv_adk_object(c, a, depth, rv_adk_inter_names, rv_adk_inter_member, &x->inter, &seen);
        case RV_ADK_INV_RUBRICS:
            return rv_adk_any_list(c, depth);
        default: /* a duration: null or a number (not a bool) */
            if (rv_adk_null(c)) return RV_ADK_OK;
            RV_ADK_NEED(c->i < c->n && (c->s[c->i] == '-' || (c->s[c->i] >= '0' && c->s[c->i] <= '9')));
            return rv_adk_skip(c, depth);
    }
}

static int rv_adk_invocation(rv_jcur *c, rv_adk *a, int depth, void *ctx) {
    rv_adk_inv_ctx x = {{-1, -1}};
    uint32_t seen;
    (void)ctx;
    RV_ADK_TRY(rv_adk_object(c, a, depth, rv_adk_inv_names, rv_adk_inv_member, &x, &seen));
    RV_ADK_NEED(seen & (1u << RV_ADK_USER)); /* the loader: "missing user_content" */
    if (rv_buf_push(&a->tool_start, x.inter.tool_start) || rv_buf_push(&a->tool_end, x.inter.tool_end) ||
        rv_buf_push(&a->inv_id_off, a->inv_ids.n))
        return RV_ADK_NOMEM;
    return RV_ADK_OK;
}

/* ---- an eval case ---- */

typedef struct {
    int conversation, scenario; /* non-null values given */
} rv_adk_case_ctx;

static int rv_adk_session_member(rv_jcur *c, rv_adk *a, int field, int depth, void *ctx) {
    (void)a;
    (void)field;
    (void)ctx;
    return rv_adk_skip(c, depth);
}

static int rv_adk_case_member(rv_jcur *c, rv_adk *a, int field, int depth, void *ctx) {
    rv_adk_case_ctx *x = (rv_adk_case_ctx *)ctx;
    uint32_t seen;
    switch (field) {
        case RV_ADK_EVAL_ID:
            return rv_adk_string(c, &a->case_ids);
        case RV_ADK_CONVERSATION:
            if (rv_adk_null(c)) return RV_ADK_OK;
            RV_ADK_NEED(c->i < c->n && c->s[c->i] == '[');
            x->conversation = 1;
            return rv_adk_list(c, a, depth, rv_adk_invocation, NULL);
        case RV_ADK_SCENARIO:
            if (rv_adk_null(c)) return RV_ADK_OK;
            x->scenario = 1;
            return rv_adk_any_object(c, a, depth, NULL);
        case RV_ADK_SESSION:
            if (rv_adk_null(c)) return RV_ADK_OK;
            RV_ADK_TRY(rv_adk_object(c, a, depth, rv_adk_session_names, rv_adk_session_member, NULL, &seen));
            RV_ADK_NEED(seen == ((1u << RV_ADK_APP_NAME) | (1u << RV_ADK_USER_ID)));
            return RV_ADK_OK;
        default:
            return rv_adk_any_list(c, depth);
    }
}

static int rv_adk_case(rv_jcur *c, rv_adk *a, int depth, void *ctx) {
    rv_adk_case_ctx x = {0, 0};
    uint32_t seen;
    (void)ctx;
    RV_ADK_TRY(rv_adk_object(c, a, depth, rv_adk_case_names, rv_adk_case_member, &x, &seen));
    RV_ADK_NEED(seen & (1u << RV_ADK_EVAL_ID));
    RV_ADK_NEED(x.conversation != x.scenario); /* exactly one of them */
    if (rv_buf_push(&a->case_id_off, a->case_ids.n) || rv_tbuf_putc(&a->case_kinds, x.conversation ? 'c' : 's') ||
        rv_buf_push(&a->case_first, a->tool_start.n))
        return RV_ADK_NOMEM;
    return RV_ADK_OK;
}

/* ---- the top level ---- */

static int rv_adk_top_member(rv_jcur *c, rv_adk *a, int field, int depth, void *ctx) {
    int escaped = 0;
    (void)ctx;
    if (field == RV_ADK_SET_ID) {
        RV_ADK_NEED(c->i < c->n && c->s[c->i] == '"' && rv_json_string(c, 1, &escaped));
        return RV_ADK_OK;
    }
    return rv_adk_list(c, a, depth, rv_adk_case, NULL);
}

/* Reads the EvalSet text s[0:n] into *a (zeroed by the caller; freed by rv_adk_free).
 * RV_ADK_OK, RV_ADK_FALLBACK (the Python loader's file) or RV_ADK_NOMEM. */
static int rv_adk_read(rv_adk *a, const char *s, int64_t n) {
    rv_jcur c = {s, n, 0};
    uint32_t seen;
    if (rv_adk_surrogate_escape(s, n)) return RV_ADK_FALLBACK;
    if (rv_buf_push(&a->case_id_off, 0) || rv_buf_push(&a->case_first, 0) || rv_buf_push(&a->inv_id_off, 0))
        return RV_ADK_NOMEM;
    rv_json_ws(&c);
    RV_ADK_TRY(rv_adk_object(&c, a, 0, rv_adk_top_names, rv_adk_top_member, NULL, &seen));
    RV_ADK_NEED(seen & (1u << RV_ADK_SET_ID));
    rv_json_ws(&c);
    RV_ADK_NEED(c.i == n);
    return RV_ADK_OK;
}

#undef RV_ADK_NAME
#undef RV_ADK_TRY
#undef RV_ADK_NEED

#endif
