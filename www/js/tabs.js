// The view switcher: the WAI-ARIA tabs pattern (arrow keys, Home and End move between
// tabs; the selected tab is the one in the tab order) plus the URL hash (#check, #diff,
// #hop, #packer), so a view can be linked to and the back button works.
export function initTabs({ onShow } = {}) {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  const nameOf = (tab) => tab.id.replace(/^tab-/, '');

  function select(tab, { focus = false, push = true } = {}) {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
    }
    if (focus) tab.focus();
    if (push && location.hash !== `#${nameOf(tab)}`) history.replaceState(null, '', `#${nameOf(tab)}`);
    onShow?.(nameOf(tab));
  }

  for (const tab of tabs) {
    tab.addEventListener('click', () => select(tab));
    tab.addEventListener('keydown', (e) => {
      const i = tabs.indexOf(tab);
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      select(tabs[(to + tabs.length) % tabs.length], { focus: true });
    });
  }
  const fromHash = () => tabs.find((t) => `#${nameOf(t)}` === location.hash);
  window.addEventListener('hashchange', () => {
    const tab = fromHash();
    if (tab) select(tab, { push: false });
  });
  select(fromHash() ?? tabs[0], { push: false });
}
