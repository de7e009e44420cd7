document.title = "unrouted";
