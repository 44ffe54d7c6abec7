// Card Arena web UI: small enhancements of server-rendered pages (each works without them).
// - times shown in the reader's own time zone;
// - standings searched as you type (the server does the searching);
// - pages that ask for it (<meta name="arena-refresh">) refresh their main content in place.

function localTimes(root) {
  for (const el of root.querySelectorAll("time[datetime]")) {
    const at = new Date(el.getAttribute("datetime"));
    if (!Number.isNaN(at.getTime())) {
      el.title = el.textContent;
      el.textContent = at.toLocaleString();
    }
  }
}

async function replaceMain(url) {
  const response = await fetch(url, { headers: { accept: "text/html" } });
  if (!response.ok) return;
  const doc = new DOMParser().parseFromString(await response.text(), "text/html");
  const fresh = doc.querySelector("main");
  const main = document.querySelector("main");
  if (fresh && main) {
    main.replaceChildren(...fresh.childNodes);
    localTimes(main);
    wireSearch(main);
  }
}

function wireSearch(root) {
  const form = root.querySelector("form.search[role=search]");
  if (!form) return;
  const input = form.querySelector("input[type=search]");
  let timer = 0;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const url = new URL(form.action, location.href);
      if (input.value.trim()) url.searchParams.set("q", input.value.trim());
      history.replaceState(null, "", url);
      const position = input.selectionStart;
      await replaceMain(url);
      const again = document.querySelector("form.search input[type=search]");
      if (again) { again.focus(); again.setSelectionRange(position, position); }
    }, 250);
  });
}

function autoRefresh() {
  const meta = document.querySelector('meta[name="arena-refresh"]');
  if (!meta) return;
  const seconds = Math.max(2, Number(meta.content) || 5);
  setInterval(() => { if (!document.hidden) replaceMain(location.href); }, seconds * 1000);
}

localTimes(document);
wireSearch(document);
autoRefresh();
