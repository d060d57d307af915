"""Copy a Snakemake report and append a script that clicks through its menu, for headless screenshots.

    python workflow/report/screenshot_steps.py report.html /tmp/shot.html "3. CO2 Forest" "Figures" "eye:co2_fig4_jaccard"
    chromium --headless --no-sandbox --virtual-time-budget=25000 --window-size=1400,900 \
        --screenshot=/tmp/shot.png file:///tmp/shot.html

Steps: plain text clicks the element with that text; "eye:NAME" / "info:NAME" click the first / second icon
(show the file / show its caption) of the table row holding NAME. One step every 1.5 s.
"""
import json, sys
src, dst, clicks = sys.argv[1], sys.argv[2], sys.argv[3:]
html = open(src).read()
script = """<script>
const steps = %s;
function byText(t){return [...document.querySelectorAll('a,li,span,div,button,td,p')].filter(e=>e.children.length<3&&e.textContent.trim()===t);}
function clickStep(s){
  let m = s.match(/^(eye|info):(.*)$/);
  if(m){const els=byText(m[2]); if(!els.length) return; const row=els[els.length-1].closest('tr')||els[els.length-1].parentElement;
        const icons=[...row.querySelectorAll('svg')]; const icon=icons[m[1]==='eye'?0:1]; if(!icon) return;
        const target=icon.closest('a,button')||icon.parentElement; target.dispatchEvent(new MouseEvent('click',{bubbles:true})); return;}
  const els=byText(s); if(els.length){els[els.length-1].click();}
}
let i=0; function next(){ if(i<steps.length){ clickStep(steps[i]); i++; setTimeout(next, 1500);} }
setTimeout(next, 1500);
</script>""" % json.dumps(clicks)
head, sep, tail = html.rpartition("</body>")
open(dst, "w").write(head + script + sep + tail if sep else html + script)
