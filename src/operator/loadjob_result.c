/* A generator's result: fetched from its own pod and checked before it is merged (loadjob.h).
 * Apart from the run (loadjob.c) because it is the part that reads outside input. */

#include "operator/loadjob.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "load/report.h"

#define FETCH_MS 3000L

struct buf {
    char *p;
    size_t len;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct buf *b = ud;
    size_t n = size * nmemb;
    if (b->len + n > LOADJOB_RESULT_MAX)
        return 0; /* over the cap: curl fails the transfer */
    char *q = realloc(b->p, b->len + n + 1);
    if (!q)
        return 0;
    memcpy(q + b->len, data, n);
    b->p = q;
    b->len += n;
    b->p[b->len] = '\0';
    return n;
}

int loadjob_result_fetch(const char *ip, char **body, char *err)
{
    char url[128];
    struct buf b = {NULL, 0};
    long code = 0;
    CURLcode cc;
    CURL *h = curl_easy_init();

    if (!h)
        return err_set(err, -ENOMEM, "out of memory");
    snprintf(url, sizeof(url), strchr(ip, ':') ? "http://[%s]:%d%s" : "http://%s:%d%s", ip,
             LOADJOB_RESULT_PORT, "/result");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, FETCH_MS);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, FETCH_MS);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    cc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    if (cc == CURLE_COULDNT_CONNECT) {
        free(b.p);
        return -EAGAIN;
    }
    if (cc != CURLE_OK || code != 200 || !b.p) {
        free(b.p);
        return err_set(err, -EPROTO, "GET %s: %s (HTTP %ld)", url, curl_easy_strerror(cc), code);
    }
    *body = b.p;
    return 0;
}

int loadjob_result_parse(const char *body, size_t len, unsigned idx, unsigned n, double late_max,
                         struct load_result *out, char *why)
{
    cJSON *doc = cJSON_ParseWithLength(body, len);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(doc, "worker");
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(doc, "workers");
    const cJSON *late = cJSON_GetObjectItemCaseSensitive(doc, "late_s");
    char e[ERR_LEN] = "";
    int rc = -EINVAL;

    memset(out, 0, sizeof(*out));
    if (!doc) {
        snprintf(why, ERR_LEN, "sent a result that is not JSON");
    } else if (!cJSON_IsNumber(w) || !cJSON_IsNumber(ws) || !cJSON_IsNumber(late) ||
               w->valuedouble != idx || ws->valuedouble != n) {
        snprintf(why, ERR_LEN, "answered with another worker's result");
    } else if (!(late->valuedouble <= late_max)) {
        snprintf(why, ERR_LEN, "started %.2f s after the shared start (at most %.2f s)",
                 late->valuedouble, late_max);
    } else if (report_json_parse(cJSON_GetObjectItemCaseSensitive(doc, "result"), out, e) != 0) {
        snprintf(why, ERR_LEN, "sent a result that does not parse: %s", e);
    } else if (out->interrupted) {
        load_result_free(out);
        snprintf(why, ERR_LEN, "was interrupted before the end of its run");
    } else {
        rc = 0;
    }
    cJSON_Delete(doc);
    return rc;
}
