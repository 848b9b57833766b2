/* An API answer as an error (client.h): the HTTP code's reason phrase, a Status body decoded,
 * and the errno both map to. Below the request layer (client.c), which calls it; it calls
 * nothing of src/kube. */

#include <errno.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/client.h"

static const char *reason_phrase(long code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 502:
        return "BadGateway";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "";
    }
}

int kube_code_to_errno(long code, const char *reason)
{
    if (code >= 200 && code < 300)
        return 0;
    switch (code) {
    case 400:
    case 422:
        return -EINVAL;
    case 401:
        return -EACCES;
    case 403:
        return -EPERM;
    case 404:
        return -ENOENT;
    case 409:
        return reason && strcmp(reason, "AlreadyExists") == 0 ? -EEXIST : KUBE_ECONFLICT;
    case 410:
        return KUBE_EGONE;
    case 413:
        return -EFBIG;
    case 429:
        return -EBUSY;
    default:
        break;
    }
    if (code >= 500 && code < 600)
        return -EIO;
    return -EPROTO;
}

static void copy_str(char *dst, size_t len, const char *src)
{
    size_t n = 0;
    /* Control characters from a server would break one-line logs; replace them. */
    for (; src && src[n] && n + 1 < len; n++)
        dst[n] = ((unsigned char)src[n] < 0x20 || src[n] == 0x7f) ? ' ' : src[n];
    dst[n] = '\0';
}

int kube_status_decode(const char *body, size_t len, long http_code, struct kube_status *out)
{
    cJSON *root = NULL;

    memset(out, 0, sizeof(*out));
    out->code = http_code;
    out->retry_after_s = -1;
    copy_str(out->reason, sizeof(out->reason), reason_phrase(http_code));
    if (body && len > 0 && len <= KUBE_BODY_MAX)
        root = cJSON_ParseWithLength(body, len);
    if (root && cJSON_IsObject(root)) {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
        if (cJSON_IsString(kind) && strcmp(kind->valuestring, "Status") == 0) {
            const cJSON *code = cJSON_GetObjectItemCaseSensitive(root, "code");
            const cJSON *reason = cJSON_GetObjectItemCaseSensitive(root, "reason");
            const cJSON *msg = cJSON_GetObjectItemCaseSensitive(root, "message");
            if (cJSON_IsNumber(code) && code->valuedouble >= 100 && code->valuedouble < 600 &&
                (http_code == 0 || (http_code >= 200 && http_code < 300)))
                out->code = (long)code->valuedouble;
            if (cJSON_IsString(reason))
                copy_str(out->reason, sizeof(out->reason), reason->valuestring);
            if (cJSON_IsString(msg))
                copy_str(out->message, sizeof(out->message), msg->valuestring);
        }
    }
    cJSON_Delete(root);
    return kube_code_to_errno(out->code, out->reason);
}
