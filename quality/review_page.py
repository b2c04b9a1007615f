"""The review page: one batch, one reviewer, keyboard first, every verdict saved at once.

`app(store, batch_key, reviewer)` is a FastAPI application (served on loopback by `grounding
review serve`); its page carries its CSS and script inline, so nothing is fetched from the
network. Keys: 1-4 the answer's verdict (correct, hallucinated, should have refused, wrongly
refused), j / k next / previous answer, [ / ] previous / next claim, s / u the selected claim
supported / unsupported, n a note (Enter saves it, Escape leaves it).
"""

from __future__ import annotations

import json
from typing import Any

from quality import review
from stages.store import ArtifactStore


def item_view(item: dict) -> dict[str, Any]:
    """An item as the page reads it: claims and evidence parsed, each claim's cited spans
    placed inside their evidence section (offsets relative to the section's text)."""
    claims = json.loads(item["claims_json"] or "[]")
    evidence = json.loads(item["evidence_json"] or "[]")
    by_id = {e["evidence_id"]: e for e in evidence}
    text = item.get("draft") or ""
    for claim in claims:
        start, end = claim.get("char_start"), claim.get("char_end")
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
            found = text.find(claim.get("text") or "\0")
            start, end = (found, found + len(claim["text"])) if found >= 0 else (None, None)
        claim["mark"] = [start, end] if start is not None else None
        cited = []
        for span in claim.get("evidence_spans") or []:
            section = by_id.get(span.get("evidence_id"))
            if section is None:
                continue
            base = section.get("char_start") or 0
            s = max(0, (span.get("char_start") or base) - base)
            e = min(len(section.get("text") or ""), (span.get("char_end") or base) - base)
            cited.append({"evidence_id": span["evidence_id"], "start": s, "end": max(s, e)})
        claim["cited"] = cited
    return {
        **{k: v for k, v in item.items() if k not in ("claims_json", "evidence_json")},
        "claims": claims,
        "evidence": evidence,
    }


def app(store: ArtifactStore, batch_key: str, reviewer: str):
    from fastapi import Body, FastAPI, HTTPException
    from fastapi.responses import HTMLResponse

    ref = review.find_batch(store, batch_key)
    items = review.load_items(store, ref)
    by_id = {i["answer_id"]: i for i in items}
    review.check_reviewer(reviewer)
    api = FastAPI(title="grounding review", docs_url=None, redoc_url=None, openapi_url=None)

    @api.get("/", response_class=HTMLResponse)
    def page() -> str:
        return PAGE.replace("__BATCH__", ref.key[:12]).replace("__REVIEWER__", reviewer)

    @api.get("/api/items")
    def list_items() -> dict:
        mine = review.read_verdicts(store, ref.key).get(reviewer, {})
        return {
            "batch": ref.key,
            "reviewer": reviewer,
            "items": [item_view(i) for i in items],
            "verdicts": mine,
        }

    @api.post("/api/verdicts")
    def save(row: dict = Body(...)) -> dict:  # noqa: B008 - FastAPI's declaration
        try:
            return review.save_verdict(store, ref.key, by_id, reviewer, row)
        except review.ReviewError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc

    return api


PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Review __BATCH__</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#263238;color:#fff;padding:.5em 1em;display:flex;gap:1.5em;align-items:center}
header .keys{font-size:12px;opacity:.8}
main{display:grid;grid-template-columns:1fr 1fr;gap:1em;padding:1em}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em}
h2{font-size:14px;text-transform:uppercase;color:#607d8b;margin:.2em 0 .5em}
.claim{background:#fff3c4;border-bottom:2px solid #f9a825;cursor:pointer}
.claim.sel{outline:2px solid #1565c0}
.claim.supported{background:#c8e6c9;border-color:#2e7d32}
.claim.unsupported{background:#ffcdd2;border-color:#c62828}
.ev{white-space:pre-wrap;font-size:13px;border-left:3px solid #b0bec5;padding-left:.6em;
  margin:.5em 0}
mark{background:#ffe082}
.verdicts button{margin:.2em;padding:.3em .7em}
.verdicts button.on{background:#1565c0;color:#fff}
#status{font-size:13px}
.badge{display:inline-block;padding:0 .5em;border-radius:3px;background:#eceff1;font-size:12px}
textarea{width:100%;height:4em}
</style></head>
<body>
<header><b>Review __BATCH__</b><span>reviewer <b id="reviewer">__REVIEWER__</b></span>
<span id="pos"></span><span id="status">loading</span>
<span class="keys">1 correct · 2 hallucinated · 3 should have refused · 4 wrongly refused ·
j/k answer · [/] claim · s/u claim verdict · n note</span></header>
<main>
<section><h2>Question</h2><div id="question"></div>
<p><span class="badge" id="stratum"></span> <span class="badge" id="confidence"></span></p>
<p id="why"></p>
<h2>Answer the gate decided on</h2><div id="answer"></div>
<div id="final"></div>
<h2>Verdict</h2><div class="verdicts" id="verdict"></div>
<h2>Note</h2><textarea id="note" placeholder="n to write, Enter to save, Escape to leave">
</textarea></section>
<section><h2>Claims and their cited spans</h2><div id="claims"></div></section>
</main>
<script>
"use strict";
const VERDICTS=["correct","hallucinated","should_have_refused","wrongly_refused"];
let items=[],verdicts={},at=0,claimAt=0;
const $=id=>document.getElementById(id);
const ESC={"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"};
function esc(s){return String(s??"").replace(/[&<>"]/g,c=>ESC[c]);}
function marked(text,spans,cls){let out="",pos=0;
  for(const [s,e,i] of spans.filter(x=>x[0]!=null).sort((a,b)=>a[0]-b[0])){
    if(s<pos)continue;out+=esc(text.slice(pos,s));
    out+=`<span class="${cls(i)}" data-i="${i}">`+esc(text.slice(s,e))+"</span>";pos=e;}
  return out+esc(text.slice(pos));}
function mine(){return verdicts[items[at].answer_id]||{claims:{}};}
function render(){
  if(!items.length){$("question").textContent="This batch has no answers.";return;}
  const it=items[at],v=mine();
  $("pos").textContent=`${at+1} / ${items.length}`;
  $("question").textContent=it.question;
  $("stratum").textContent=it.stratum+(it.refusal_reason?": "+it.refusal_reason:"");
  $("confidence").textContent="confidence "+(it.confidence??it.overall_score??"n/a");
  $("why").textContent=it.queue_reason?"Queued because "+it.queue_reason:"";
  const claimCls=i=>"claim"+(i===claimAt?" sel":"")+(v.claims&&v.claims[i]?" "+v.claims[i]:"");
  const marks=it.claims.map((c,i)=>c.mark?[c.mark[0],c.mark[1],i]:[null]);
  $("answer").innerHTML=it.draft?marked(it.draft,marks,claimCls):"<i>(no answer: refused)</i>";
  const changed=it.final_answer&&it.final_answer!==it.draft;
  $("final").innerHTML=changed?"<h2>What the user got</h2>"+esc(it.final_answer):"";
  $("verdict").innerHTML=VERDICTS.map((x,i)=>`<button data-v="${x}" `+
    `class="${v.verdict===x?"on":""}">${i+1} ${x.replace(/_/g," ")}</button>`).join("");
  if(document.activeElement!==$("note"))$("note").value=v.note||"";
  const ev=Object.fromEntries(it.evidence.map(e=>[e.evidence_id,e]));
  $("claims").innerHTML=it.claims.map((c,i)=>{
    const cited=c.cited.map(s=>{const e=ev[s.evidence_id];
      const head=`${esc(s.evidence_id)} ${esc(e.title)} ${esc(e.section_path||"")}`;
      return `<div class="ev"><b>${head}</b>\n`+
        marked(e.text||"",[[s.start,s.end,0]],()=>"mark")+"</div>";}).join("");
    return `<div><span class="${claimCls(i)}" data-i="${i}">${i+1}. ${esc(c.text)}</span>
      <span class="badge">${esc(c.status)} ${c.score==null?"":Number(c.score).toFixed(2)}</span>
      ${v.claims&&v.claims[i]?`<span class="badge">you: ${v.claims[i]}</span>`:""}
      ${cited||'<div class="ev"><i>no cited span</i></div>'}</div>`;}).join("");
}
async function save(patch){
  const it=items[at],v=mine();
  const row={answer_id:it.answer_id,verdict:v.verdict??null,claims:{...(v.claims||{})},
    note:v.note||"",...patch};
  $("status").textContent="saving";
  try{const r=await fetch("api/verdicts",{method:"POST",
      headers:{"content-type":"application/json"},body:JSON.stringify(row)});
    const body=await r.json();
    if(!r.ok){$("status").textContent="NOT saved: "+(body.detail||r.status);return;}
    verdicts[it.answer_id]=body;$("status").textContent="saved "+body.at.slice(11,19);render();}
  catch(e){$("status").textContent="NOT saved: "+e;}
}
function claimVerdict(value){const it=items[at];if(!it.claims.length)return;
  const c={...(mine().claims||{})};c[claimAt]=value;save({claims:c});}
document.addEventListener("keydown",ev=>{
  if(document.activeElement===$("note")){
    if(ev.key==="Enter"&&!ev.shiftKey){ev.preventDefault();$("note").blur();save({note:$("note").value});}
    else if(ev.key==="Escape"){$("note").blur();render();}
    return;}
  if(ev.ctrlKey||ev.metaKey||ev.altKey||!items.length)return;
  const k=ev.key;
  if("1234".includes(k)&&k.length===1){save({verdict:VERDICTS[Number(k)-1]});}
  else if(k==="j"){at=Math.min(items.length-1,at+1);claimAt=0;render();}
  else if(k==="k"){at=Math.max(0,at-1);claimAt=0;render();}
  else if(k==="]"){claimAt=Math.min(items[at].claims.length-1,claimAt+1);render();}
  else if(k==="["){claimAt=Math.max(0,claimAt-1);render();}
  else if(k==="s"){claimVerdict("supported");}
  else if(k==="u"){claimVerdict("unsupported");}
  else if(k==="n"){ev.preventDefault();$("note").focus();}
  else return;
  ev.preventDefault();
});
document.addEventListener("click",ev=>{const b=ev.target.closest("button[data-v]");
  if(b){save({verdict:b.dataset.v});return;}
  const c=ev.target.closest(".claim");if(c){claimAt=Number(c.dataset.i);render();}});
fetch("api/items").then(r=>r.json()).then(d=>{items=d.items;verdicts=d.verdicts;
  const first=items.findIndex(i=>!(verdicts[i.answer_id]||{}).verdict);at=first<0?0:first;
  $("status").textContent=`${Object.keys(verdicts).length} judged`;render();
  document.body.dataset.ready="1";})
  .catch(e=>{$("status").textContent="could not load the batch: "+e;});
</script></body></html>
"""
