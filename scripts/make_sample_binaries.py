"""Generate the PDF and DOCX documents of the sample knowledge base.

Usage:  .venv/bin/python scripts/make_sample_binaries.py

Writes into data/sample/docs/. Output is deterministic: reportlab runs with
invariant=1 and DOCX files get fixed core properties and fixed ZIP timestamps,
so re-running produces byte-identical files.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from pathlib import Path

from docx import Document
from reportlab.lib.pagesizes import A4
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "data" / "sample" / "docs"

FIXED_DT = dt.datetime(2026, 1, 1, 0, 0, 0)
ZIP_DT = (2026, 1, 1, 0, 0, 0)

# A document is a list of blocks:
#   ("h1", text) | ("h2", text) | ("p", text) | ("table", [header, row, ...]) | ("pagebreak",)

PRICE_LIST_2025 = [
    ("h1", "Northwind Cloud Price List 2025"),
    ("p", "Version 2025.1 - Published 15 January 2025 - Northwind Cloud Ltd"),
    (
        "p",
        "The effective date of this price list is 1 February 2025. All prices are in euros "
        "per user per month and exclude VAT.",
    ),
    ("h2", "Plans and per-seat prices"),
    (
        "table",
        [
            ["Plan", "Monthly list price", "Minimum seats", "Storage per user"],
            ["Starter", "€10 per user per month", "1 (maximum 10 users)", "30 GB"],
            ["Business", "€25 per user per month", "5", "200 GB"],
            ["Enterprise", "€42 per user per month", "20", "1 TB"],
        ],
    ),
    (
        "p",
        "In 2025 the Enterprise plan costs €42 per user per month and requires a minimum "
        "of 20 seats.",
    ),
    ("h2", "Annual discount"),
    (
        "p",
        "Customers who commit to annual billing receive a 10% annual discount on the monthly "
        "list price.",
    ),
    ("h2", "Add-ons"),
    (
        "p",
        "Premium Support costs €6 per user per month. Additional storage costs €5 per 100 GB "
        "per month.",
    ),
    ("h2", "Validity"),
    (
        "p",
        "This price list is valid until it is replaced by a newer price list. Negotiated prices "
        "in individual customer agreements take precedence.",
    ),
]

CONTOSO_CONTRACT = [
    ("h1", "Service Agreement - Contoso Retail GmbH"),
    (
        "p",
        'Contract reference NWC-2026-0147 between Northwind Cloud Ltd, London (the "Provider") '
        'and Contoso Retail GmbH, Munich (the "Customer").',
    ),
    ("h2", "1. Term"),
    (
        "p",
        "The Contoso Retail GmbH agreement takes effect on 1 March 2026 and runs for an initial "
        "term of 36 months.",
    ),
    ("h2", "2. Subscription"),
    (
        "p",
        "The Customer subscribes to the Enterprise plan for 320 seats. Amendment No. 1 dated "
        "1 July 2026 increased the seat count from 280 to 320 seats.",
    ),
    (
        "p",
        "Contoso Retail pays a negotiated price of €44 per user per month for the Enterprise "
        "plan, fixed for the initial term.",
    ),
    ("h2", "3. Payment terms"),
    (
        "p",
        "Contoso Retail's payment terms are 45 days from the invoice date. Invoices are issued "
        "quarterly in advance.",
    ),
    ("h2", "4. Termination"),
    (
        "p",
        "Either party may terminate this agreement at the end of the initial term by giving "
        "60 days' written notice. The termination notice period for Contoso Retail is 60 days.",
    ),
    ("h2", "5. Liability"),
    (
        "p",
        "The total liability of each party under this agreement is capped at €500,000 per "
        "contract year.",
    ),
    ("h2", "6. Data residency and law"),
    (
        "p",
        "All Customer data is hosted in the Frankfurt region only. This agreement is governed "
        "by the laws of Germany; the courts of Munich have jurisdiction.",
    ),
    ("p", "Where this agreement is silent, the Northwind Cloud Master Service Agreement applies."),
]

SECURITY_POLICY = [
    ("h1", "Northwind Cloud Security and Data Retention Policy"),
    (
        "p",
        "Version 2.4 - Approved 30 September 2026 - Owner: Daniel Okafor, Chief Information "
        "Security Officer",
    ),
    ("h2", "1. Purpose and scope"),
    (
        "p",
        "This policy describes how Northwind Cloud Ltd protects customer data and how long "
        "data, backups and logs are kept. It applies to all production systems, employees and "
        "contractors.",
    ),
    ("h2", "2. Encryption"),
    (
        "p",
        "Customer data is encrypted at rest using AES-256. Data in transit is encrypted using "
        "TLS 1.2 or higher.",
    ),
    ("h2", "3. Access control"),
    (
        "p",
        "Multi-factor authentication is mandatory for all staff accounts. Access rights to "
        "production systems are reviewed every quarter, and access is removed within 24 hours "
        "of an employee leaving the company.",
    ),
    ("pagebreak",),
    ("h2", "4. Backups"),
    (
        "p",
        "Full backups of customer data are taken every 24 hours, and incremental backups are "
        "taken every 4 hours.",
    ),
    ("p", "Backups are retained for 35 days and are then deleted automatically."),
    (
        "p",
        "Backups of data in the Frankfurt region are stored in the Dublin region, so that a "
        "regional outage does not affect both copies.",
    ),
    ("h2", "5. Recovery objectives"),
    (
        "p",
        "The recovery point objective (RPO) is 4 hours and the recovery time objective (RTO) "
        "is 8 hours. Restore tests are performed every month.",
    ),
    ("pagebreak",),
    ("h2", "6. Data retention"),
    ("p", "Application logs are retained for 90 days. Audit logs are retained for 13 months."),
    (
        "p",
        "After a contract ends, customer data is deleted within 28 days of contract "
        "termination, including from active storage; remaining copies expire with the backup "
        "cycle. A deletion certificate is available on request.",
    ),
    ("h2", "7. Review"),
    (
        "p",
        "This policy is reviewed at least once a year by the Chief Information Security Officer.",
    ),
]

MSA_TEMPLATE = [
    ("h1", "Northwind Cloud Master Service Agreement (Template)"),
    (
        "p",
        "Template version 3.0 - Northwind Cloud Ltd. This template sets out the standard terms "
        "that apply unless an individual customer agreement states otherwise.",
    ),
    ("h2", "1. Scope"),
    (
        "p",
        'This Master Service Agreement ("MSA") governs the use of the Northwind Cloud services '
        "ordered by the customer through one or more order forms.",
    ),
    ("h2", "2. Term and renewal"),
    (
        "p",
        "The MSA has an initial term of 12 months and renews automatically for successive "
        "12-month periods.",
    ),
    ("h2", "3. Fees and payment terms"),
    (
        "p",
        "Under the standard MSA template, payment terms are 30 days from the date of invoice. "
        "Late payments accrue interest at 1% per month.",
    ),
    ("h2", "4. Termination"),
    (
        "p",
        "Either party may terminate the MSA at the end of the current term by giving 90 days' "
        "written notice. The standard termination notice period in the MSA template is 90 days.",
    ),
    (
        "p",
        "Either party may terminate for material breach that is not cured within 21 days of "
        "written notice.",
    ),
    ("h2", "5. Limitation of liability"),
    (
        "p",
        "Each party's total liability is capped at 12 months of fees, meaning the fees paid or "
        "payable in the 12 months before the claim arose.",
    ),
    ("h2", "6. Data protection and service levels"),
    (
        "p",
        "The Northwind Cloud Data Processing Addendum and the Northwind Cloud Service Level "
        "Agreement form part of the MSA.",
    ),
    ("h2", "7. Governing law"),
    (
        "p",
        "The MSA template is governed by the laws of England and Wales, and the courts of "
        "London have exclusive jurisdiction.",
    ),
]

FABRIKAM_CONTRACT = [
    ("h1", "Service Agreement - Fabrikam Logistics Ltd"),
    (
        "p",
        "Contract reference NWC-2026-0212 between Northwind Cloud Ltd and Fabrikam Logistics "
        "Ltd, Birmingham. Confidential: sales team only.",
    ),
    ("h2", "1. Term and subscription"),
    (
        "p",
        "The Fabrikam Logistics agreement takes effect on 1 May 2026 and runs for 24 months. "
        "Fabrikam subscribes to the Business plan for 140 seats at €27 per user per month.",
    ),
    ("h2", "2. Payment terms"),
    (
        "p",
        "Fabrikam Logistics' payment terms are 14 days from the invoice date. Invoices are "
        "issued monthly.",
    ),
    ("h2", "3. Custom uptime credit"),
    (
        "p",
        "If monthly uptime falls below 99.95%, Fabrikam Logistics receives a 15% service credit "
        "on the monthly fee. This custom uptime credit replaces the service credits of the "
        "standard SLA for this customer.",
    ),
    ("h2", "4. Termination"),
    (
        "p",
        "The termination notice period in the Fabrikam Logistics agreement is 30 days' written "
        "notice before the end of any contract month after the first 12 months.",
    ),
    ("h2", "5. Liability"),
    ("p", "The liability cap in the Fabrikam Logistics agreement is 18 months of fees."),
    ("h2", "6. Account management"),
    (
        "p",
        "Fabrikam Logistics is assigned a dedicated technical account manager who holds a "
        "monthly operations review.",
    ),
]

HR_HANDBOOK = [
    ("h1", "HR Benefits and Pay Guide 2026"),
    ("p", "Version 2026.1 - Restricted: HR team only. Northwind Cloud Ltd, People team."),
    ("h2", "Parental leave"),
    (
        "p",
        "Primary caregivers receive 20 weeks of parental leave at full pay. Secondary "
        "caregivers receive 6 weeks of parental leave at full pay.",
    ),
    ("h2", "Annual bonus"),
    (
        "p",
        "The target annual bonus is 8% of base salary. The bonus eligibility review window "
        "runs from 1 January to 31 January, and bonuses are paid with the March payroll.",
    ),
    ("h2", "Salary bands"),
    (
        "table",
        [
            ["Level", "Salary band (GBP per year)"],
            ["L1", "£32,000 to £40,000"],
            ["L2", "£41,000 to £55,000"],
            ["L3", "£56,000 to £72,000"],
            ["L4", "£73,000 to £95,000"],
        ],
    ),
    (
        "p",
        "Salary bands are reviewed every April against market data for technology companies "
        "in London and Manchester. Offers above the top of a band need approval from the "
        "Chief People Officer.",
    ),
    ("p", "The salary band for level L3 is £56,000 to £72,000."),
    ("h2", "Pension"),
    (
        "p",
        "Northwind Cloud contributes 6% of base salary to the company pension scheme when the "
        "employee contributes at least 4%.",
    ),
    ("h2", "Other benefits"),
    (
        "p",
        "Employees receive 28 days of annual leave plus UK bank holidays, and a learning "
        "budget of £1,200 per year.",
    ),
]

ONBOARDING_GUIDE = [
    ("h1", "Customer Onboarding Guide"),
    (
        "p",
        "Version 1.2 - Northwind Cloud Customer Success. How new customers get from signature "
        "to go-live.",
    ),
    ("h2", "Before kick-off"),
    (
        "p",
        "Before the kick-off call, the customer nominates a project lead and at least one "
        "workspace administrator, and shares a list of the teams that will use Northwind Cloud "
        "first. Northwind Cloud shares a project plan template and the checklist for identity "
        "provider settings.",
    ),
    ("h2", "Phase 1: Kick-off"),
    (
        "p",
        "The kick-off call takes place within 5 business days of contract signature. Enterprise "
        "customers are assigned a named onboarding manager.",
    ),
    ("h2", "Phase 2: Identity and users"),
    (
        "p",
        "Administrators connect their identity provider for single sign-on and set up user "
        "provisioning with SCIM.",
    ),
    ("h2", "Phase 3: Data import"),
    (
        "p",
        "The CSV importer accepts up to 500,000 rows per file. Larger data sets should be split "
        "into several files or imported through the API.",
    ),
    ("h2", "Phase 4: Admin training"),
    ("p", "Each new customer receives two 90-minute admin training sessions, delivered remotely."),
    ("h2", "Go-live"),
    ("p", "The target is to go live within 6 weeks of the kick-off call."),
    (
        "p",
        "After go-live, the onboarding project is handed over to the customer's account manager, "
        "and a review meeting is held 30 days later to check adoption and open questions.",
    ),
]

PDFS = {
    "pricing/price-list-2025.pdf": ("Northwind Cloud Price List 2025", PRICE_LIST_2025),
    "contracts/contoso-retail-gmbh-agreement.pdf": (
        "Service Agreement - Contoso Retail GmbH",
        CONTOSO_CONTRACT,
    ),
    "policies/security-data-retention-policy.pdf": (
        "Northwind Cloud Security and Data Retention Policy",
        SECURITY_POLICY,
    ),
}

DOCXS = {
    "contracts/msa-template.docx": (
        "Northwind Cloud Master Service Agreement (Template)",
        MSA_TEMPLATE,
    ),
    "contracts/fabrikam-logistics-agreement.docx": (
        "Service Agreement - Fabrikam Logistics Ltd",
        FABRIKAM_CONTRACT,
    ),
    "hr/hr-benefits-and-pay-2026.docx": ("HR Benefits and Pay Guide 2026", HR_HANDBOOK),
    "guides/customer-onboarding-guide.docx": ("Customer Onboarding Guide", ONBOARDING_GUIDE),
}

ALL_SOURCES = {**PDFS, **DOCXS}


def block_texts(blocks) -> list[str]:
    """Plain text of every block (used by scripts/check_sample.py as well)."""
    out: list[str] = []
    for b in blocks:
        if b[0] == "table":
            out.extend(" | ".join(row) for row in b[1])
        elif b[0] != "pagebreak":
            out.append(b[1])
    return out


# ---------------------------------------------------------------- PDF

PAGE_W, PAGE_H = A4
MARGIN = 60
BODY_FONT, BOLD_FONT = "Helvetica", "Helvetica-Bold"


def _wrap(text: str, font: str, size: float, width: float) -> list[str]:
    lines, cur = [], ""
    for word in text.split():
        cand = f"{cur} {word}".strip()
        if stringWidth(cand, font, size) <= width or not cur:
            cur = cand
        else:
            lines.append(cur)
            cur = word
    if cur:
        lines.append(cur)
    return lines


def write_pdf(path: Path, title: str, blocks) -> None:
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.setTitle(title)
    c.setAuthor("Northwind Cloud Ltd")
    c.setCreator("make_sample_binaries.py")
    width = PAGE_W - 2 * MARGIN
    page = 1
    y = PAGE_H - MARGIN

    def footer():
        c.setFont(BODY_FONT, 8)
        c.drawString(MARGIN, 30, f"Northwind Cloud Ltd - {title} - Page {page}")

    def new_page():
        nonlocal page, y
        footer()
        c.showPage()
        page += 1
        y = PAGE_H - MARGIN

    def ensure(h):
        if y - h < MARGIN:
            new_page()

    for b in blocks:
        kind = b[0]
        if kind == "pagebreak":
            new_page()
        elif kind == "h1":
            ensure(30)
            c.setFont(BOLD_FONT, 17)
            c.drawString(MARGIN, y - 17, b[1])
            y -= 34
        elif kind == "h2":
            ensure(28)
            y -= 6
            c.setFont(BOLD_FONT, 12.5)
            c.drawString(MARGIN, y - 12.5, b[1])
            y -= 22
        elif kind == "p":
            for line in _wrap(b[1], BODY_FONT, 10, width):
                ensure(14)
                c.setFont(BODY_FONT, 10)
                c.drawString(MARGIN, y - 10, line)
                y -= 14
            y -= 6
        elif kind == "table":
            rows = b[1]
            ncol = len(rows[0])
            colw = width / ncol
            for i, row in enumerate(rows):
                ensure(16)
                font = BOLD_FONT if i == 0 else BODY_FONT
                c.setFont(font, 9.5)
                for j, cell in enumerate(row):
                    c.drawString(MARGIN + j * colw + 3, y - 11, cell)
                c.line(MARGIN, y - 15, MARGIN + width, y - 15)
                y -= 16
            y -= 10
    footer()
    c.showPage()
    c.save()


# ---------------------------------------------------------------- DOCX


def write_docx(path: Path, title: str, blocks) -> None:
    doc = Document()
    cp = doc.core_properties
    cp.title = title
    cp.author = "Northwind Cloud Ltd"
    cp.last_modified_by = "Northwind Cloud Ltd"
    cp.created = FIXED_DT
    cp.modified = FIXED_DT
    cp.last_printed = FIXED_DT
    cp.revision = 1
    for b in blocks:
        kind = b[0]
        if kind == "h1":
            doc.add_heading(b[1], level=1)
        elif kind == "h2":
            doc.add_heading(b[1], level=2)
        elif kind == "p":
            doc.add_paragraph(b[1])
        elif kind == "table":
            rows = b[1]
            table = doc.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Table Grid"
            for i, row in enumerate(rows):
                for j, cell in enumerate(row):
                    table.cell(i, j).text = cell
        elif kind == "pagebreak":
            doc.add_page_break()
    buf = io.BytesIO()
    doc.save(buf)
    # Re-pack with fixed timestamps and a stable member order for byte-identical output.
    buf.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            info = zipfile.ZipInfo(name, date_time=ZIP_DT)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zout.writestr(info, zin.read(name))
    path.write_bytes(out.getvalue())


def main() -> None:
    for rel, (title, blocks) in PDFS.items():
        p = DOCS / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        write_pdf(p, title, blocks)
        print("wrote", p.relative_to(ROOT))
    for rel, (title, blocks) in DOCXS.items():
        p = DOCS / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        write_docx(p, title, blocks)
        print("wrote", p.relative_to(ROOT))


if __name__ == "__main__":
    main()
