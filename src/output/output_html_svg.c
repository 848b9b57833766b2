/* report.html's SVG helpers (output_int.h), below every chart that draws with them:
 * output_html.c, output_html_capacity.c and output_html_scale_out.c. */

#include <stdio.h>

#include "load/report_html.h"
#include "output/output.h"
#include "output/output_int.h"

void output_html_svg_open(FILE *f, const char *id, const char *cls, int w, int h, const char *label)
{
    fprintf(f, "<svg id=\"%s\" class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" ", id, cls);
    fprintf(f, "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", w, h,
            w, h);
    report_html_esc(f, label);
    fputs("\">\n", f);
}

void output_html_row_label(FILE *f, const struct output_doc *d, size_t i, int y)
{
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lbl\" text-anchor=\"end\">",
            OUTPUT_HTML_LABEL_W - 8, y + OUTPUT_HTML_ROW_H / 2 + 4);
    if ((int)i == d->advice->recommended)
        fputs("* ", f);
    report_html_esc(f, d->rows[i].variant.label);
    fputs("</text>\n", f);
}
