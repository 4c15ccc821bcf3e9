// The pass stepper's list of steps (anywidget ESM; relay_nb/notebook/stepper.py builds the
// table as HTML in the `value` traitlet, with one <tr data-step="i"> per step).  A stock
// HTML widget cannot report clicks, which is all this adds: clicking a row sends
// {step: i} to Python, which shows that step (PassStepper.go).  Plain ES module, offline.

function render({ model, el }) {
  el.classList.add("relay-step-table");
  const draw = () => {
    const scroll = el.querySelector(".relay-steps-scroll");
    const top = scroll ? scroll.scrollTop : 0;
    el.innerHTML = model.get("value");
    const again = el.querySelector(".relay-steps-scroll");
    if (again) again.scrollTop = top; // redrawing on every step must not jump the list
  };
  const onClick = (event) => {
    const row = event.target.closest("tr[data-step]");
    if (row && el.contains(row)) model.send({ step: Number(row.getAttribute("data-step")) });
  };
  draw();
  model.on("change:value", draw);
  el.addEventListener("click", onClick);
  return () => {
    model.off("change:value", draw);
    el.removeEventListener("click", onClick);
  };
}

export default { render };
